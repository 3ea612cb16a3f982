"""Where the figures get their texts: the one function a real LM plugs into.

Every script draws watermarked texts through :func:`generations`; a synthetic preset
(``sims.LM_PRESETS``) goes to :func:`sims.generate`; a real LM (``smollm2``, a random test
model, a model folder) goes through the batched torch backend
(:func:`sims.torch_backend.real_lm.generate_on`, prompts of the ``lfqa`` set).  Everything
downstream (scores, attacks, KL, DG) reads only the :class:`sims.Generation` record; what needs
the LM's next-token probabilities asks :func:`get_lm`, exact for a synthetic preset and the
model's softmax for a real LM.
"""

from __future__ import annotations

from sims.core.defaults import KEY  # shared by every figure

REAL_SIZE = dict(n=32, T=100)  # the most texts and tokens a script draws from a real LM (python -m paper_figs --real-n / --real-T)


def is_synthetic(lm: str) -> bool:
    """True for a synthetic preset name."""
    from sims.lm.synthetic import LM_PRESETS

    return lm in LM_PRESETS


def sized(lm: str, n: int, T: int) -> tuple[int, int]:
    """(n, T) for LM ``lm``: as given for a synthetic preset, capped at :data:`REAL_SIZE` for a
    real LM (a CPU draws SmolLM2 at ~100 tokens/s); the scripts record what they drew."""
    if is_synthetic(lm):
        return n, T
    return min(n, REAL_SIZE["n"]), min(T, REAL_SIZE["T"])


def get_lm(lm: str, vocab_size: int | None = None):
    """What answers ``next_probs`` / ``probs_along`` for LM ``lm`` (the LM-dependent attacks and UW /
    ITS detection ask it): a synthetic preset's own object (``vocab_size``: its vocabulary, default
    the preset's), or a real LM's :func:`~sims.torch_backend.real_lm.oracle_on`."""
    from sims.lm.synthetic import get_lm as _get

    if is_synthetic(lm):
        return _get(lm, vocab_size=vocab_size)
    from sims.torch_backend.real_lm import oracle_on

    return oracle_on(lm)


def generations(lm: str, algo: str, n: int, T: int, seed: int, *, key: int = KEY, vocab_size: int | None = None, **params):
    """``n`` texts of ``T`` tokens of watermark ``algo`` on LM ``lm``, as a :class:`sims.Generation`.

    Parameters
    ----------
    lm : str
        A synthetic preset (``news``, ``lfqa``, ...) or a real LM (``smollm2``, ``random-llama``, a folder).
    algo : str
        One of ``sims.ALGOS``.
    n, T, seed : int
        Texts, tokens per text, sampling seed.
    key : int
        Watermark key.
    vocab_size : int, optional
        Vocabulary of the synthetic preset (smaller is faster; default the preset's).
    **params
        The algorithm's parameters (gamma, delta, Delta, eta, lam1, tau, alpha, M).
    """
    from sims.watermarks.generate import generate

    if not is_synthetic(lm):
        from sims.torch_backend.real_lm import generate_on

        return generate_on(lm, algo, n=n, T=T, seed=seed, key=key, **params)
    return generate(get_lm(lm, vocab_size), algo, n=n, T=T, seed=seed, key=key, **params)


def label(algo: str, params: dict) -> str:
    """``"srl delta=2, gamma=0.25"``: a configuration's name in legends and tables."""
    return (f"{algo} " + ", ".join(f"{k}={v:g}" for k, v in params.items())).strip()
