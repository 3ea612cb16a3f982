"""``python -m sims.torch_backend evaluate``: the keys of ``sims evaluate`` on a real LM, plus tokens/s."""

from __future__ import annotations

import numpy as np
import torch

from sims.detect import scores as detect
from sims.experiments.evaluate import clopper_pearson
from sims.torch_backend import prompts as prompt_sets
from sims.torch_backend.generate_torch import generate, make_processor
from sims.torch_backend.static_decode import generate_static
from sims.torch_backend.model import load


def encode(tok, text: str, chat: bool) -> torch.LongTensor:
    if chat and getattr(tok, "chat_template", None):
        ids = tok.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True, return_tensors="pt")
        ids = ids if torch.is_tensor(ids) else ids["input_ids"]
    else:
        ids = tok(text, return_tensors="pt")["input_ids"]
    return ids


def teacher_forced_probs(model, g, V):
    """``step_probs(i)`` for generated text i: the model's next-token distributions, one forward pass."""

    @torch.no_grad()
    def step_probs(i):
        seq = torch.as_tensor(np.concatenate([g.prompts[i], g.tokens[i]]))[None]
        P = g.prompts.shape[1]
        logits = model(input_ids=seq).logits[0, P - 1 : seq.shape[1] - 1, :V].double()
        return torch.softmax(logits, -1).numpy()

    return step_probs


def _score(algo, g, key, gamma, V, dedup, model=None):
    if algo in ("its", "uw-delta", "uw-gamma"):
        g.meta.update(algo=algo, key=key)
        return detect.score_keyed_order(g, teacher_forced_probs(model, g, V))
    if algo == "ems":
        return detect.score_ems(g.tokens, g.prompts, key, vocab_size=V, dedup=dedup)
    if algo == "autocov":
        return detect.score_autocov(g.tokens, g.prompts, key, gamma, vocab_size=V)
    return detect.score_redgreen(g.tokens, g.prompts, key, gamma, vocab_size=V, dedup=dedup)


def _generate(engine, model, ids, T, algo, key, seed, V, params):
    if engine == "static":
        kw = {k: v for k, v in params.items() if k in ("gamma", "delta", "Delta", "eta", "lam1") and v is not None}
        return generate_static(model, ids, T, algo=algo, key=key, seed=seed, vocab_size=V, **kw)
    return generate(model, ids, T, make_processor(algo, V, key, **params), seed=seed, vocab_size=V)


def evaluate(model_name: str, algo: str, *, n: int, T: int, seed: int = 0, key: int = 15485863, prompts: str = "lfqa", dedup: bool = False,
             engine: str = "loop", **params) -> dict:
    """Generate with ``algo`` on a real LM and detect with the matching detector (ITS / UW use the
    model's teacher-forced probabilities, as UW's detector requires).

    ``engine``: "loop" (transformers-style loop with the ``LogitsProcessor`` objects, every algorithm) or
    "static" (:func:`.static_decode.generate_static`: static KV cache, fused kernels and CUDA
    graphs on a GPU; none, srl and dualga).
    """
    if engine not in ("loop", "static"):
        raise ValueError(f"engine must be 'loop' or 'static'; got {engine!r}")
    if engine == "static" and algo not in ("none", "srl", "dualga"):
        raise ValueError(f"engine 'static' runs algo 'none', 'srl' or 'dualga'; got {algo!r}")
    model, tok = load(model_name)
    V = len(tok) if tok is not None else model.config.vocab_size
    if prompts == "lfqa":
        texts, chat = prompt_sets.lfqa_questions(n), True
    elif prompts == "news":
        texts, chat = prompt_sets.news_prompts(n), False
    else:
        texts, chat = prompt_sets.load_jsonl(prompts)[:n], True
    if tok is None:
        rng = np.random.default_rng(seed)
        batches = [torch.tensor(rng.integers(0, V, size=(1, 8))) for _ in range(n)]
    else:
        batches = [encode(tok, t, chat) for t in texts]
    rows = dict(kl=[], dg=[], lp=[], z=[], lp0=[])
    tokens, seconds = 0, 0.0
    for i, ids in enumerate(batches):
        g = _generate(engine, model, ids, T, algo, key, seed + i, V, params)
        gamma = g.meta["gamma"]
        r = _score(algo, g, key, gamma, V, dedup, model)
        g0 = _generate(engine, model, ids, T, "none", key, seed + 10_000 + i, V, params)
        r0 = _score(algo, g0, key, gamma, V, dedup, model)
        rows["kl"].append(float(g.records["kl"].mean()) if g.records else 0.0)
        rows["dg"].append(float(g.records["dg"].mean()) if g.records else 0.0)
        rows["lp"].append(float(r.log10_p[0]))
        rows["z"].append(float(r.z[0]))
        rows["lp0"].append(float(r0.log10_p[0]))
        tokens += T
        seconds += g.seconds
    lp, lp0 = np.array(rows["lp"]), np.array(rows["lp0"])
    k = int(np.sum(lp0 <= -4))
    return {
        "model": model_name, "algo": algo, "n": n, "T": T, "prompts": prompts,
        "kl_per_token": float(np.mean(rows["kl"])), "realized_dg": float(np.mean(rows["dg"])),
        "tpr_at_1e-4": float(np.mean(lp <= -4)), "tpr_at_1e-6": float(np.mean(lp <= -6)),
        "empirical_fpr_at_1e-4": k / len(lp0), "empirical_fpr_at_1e-4_ci95": clopper_pearson(k, len(lp0)),
        "median_log10_p": float(np.median(lp)), "z_mean": float(np.mean(rows["z"])) if np.all(np.isfinite(rows["z"])) else None, "tokens_per_s": tokens / seconds,
    }
