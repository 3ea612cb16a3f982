"""Where the figures get their texts: the one function a real LM plugs into.

Every script draws watermarked texts through :func:`generations`, which opens the LM with
:func:`sims.get_lm` (a synthetic preset or fitted ``.npz`` on the Numba generator; a real LM,
``smollm2``, a random test model or a model folder, on the batched torch backend after prompts
of the ``lfqa`` set).  Everything downstream (scores, attacks, KL, DG) reads only the
:class:`sims.Generation` record; what needs the LM's next-token probabilities asks the same
object (:func:`figure_lm`), exact for a synthetic LM and the model's softmax for a real LM.
"""

from __future__ import annotations

from sims.core.defaults import KEY  # shared by every figure

REAL_SIZE = dict(n=32, T=100)  # the most texts and tokens a script draws from a real LM (python -m paper_figs --real-n / --real-T)


def is_synthetic(lm: str) -> bool:
    """True for a synthetic LM (a preset, a fitted ``.npz``): the rule of :func:`sims.lm.kind.is_real`."""
    from sims.lm.kind import is_real

    return not is_real(lm)


SYNTHETIC_NAMES = {"news": "news-like (synthetic)", "lfqa": "lfqa-like (synthetic)", "smollm2-fit": "smollm2-fit (synthetic)"}
"""The synthetic presets as reports and figures name them, so that no reader takes them for C4 / ELI5 text (:func:`display`)."""


def display(lm: str) -> str:
    """An LM's name as a reader sees it: a synthetic preset named for what it stands in for, marked as synthetic."""
    return SYNTHETIC_NAMES.get(lm, lm)


def sized(lm: str, n: int, T: int) -> tuple[int, int]:
    """(n, T) for LM ``lm``: as given for a synthetic preset, capped at :data:`REAL_SIZE` for a
    real LM (a CPU draws SmolLM2 at ~100 tokens/s); the scripts record what they drew."""
    if is_synthetic(lm):
        return n, T
    return min(n, REAL_SIZE["n"]), min(T, REAL_SIZE["T"])


def figure_lm(lm: str, vocab_size: int | None = None):
    """LM ``lm`` as the figures open it: :func:`sims.get_lm` with ``vocab_size`` applied to a synthetic preset
    only (default the preset's; a fitted or real LM keeps its own, where ``sims.get_lm`` would refuse one):
    what answers ``next_probs`` / ``probs_along`` for the LM-dependent attacks and UW / ITS detection."""
    from sims.lm.door import get_lm
    from sims.lm.kind import lm_kind

    # a smaller vocabulary speeds up a preset; a fitted LM keeps its own (its levels are fitted at it), a real LM its tokenizer's
    return get_lm(lm, vocab_size=vocab_size if lm_kind(lm) == "preset" else None)


def generations(lm: str, algo: str, n: int, T: int, seed: int, *, key: int = KEY, vocab_size: int | None = None, **params):
    """``n`` texts of ``T`` tokens of watermark ``algo`` on LM ``lm``, as a :class:`sims.Generation`.

    Parameters
    ----------
    lm : str
        Any LM of :func:`sims.get_lm`: a synthetic preset (``news``, ``lfqa``, ...), a fitted ``.npz`` or a
        real LM (``smollm2``, ``random-llama``, a folder).
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
    from sims.generation.any_lm import generate

    return generate(figure_lm(lm, vocab_size), algo, n=n, T=T, seed=seed, key=key, **params)


def label(algo: str, params: dict) -> str:
    """``"srl delta=2, gamma=0.25"``: a configuration's name in legends and tables."""
    return (f"{algo} " + ", ".join(f"{k}={v:g}" for k, v in params.items())).strip()


def run_sized(main, name: str, sizes: str = "") -> None:
    """The command line of a figure script run on its own (``python -m paper_figs.NAME --out DIR [--quick] [--lm LM]
    [--n N] [--T T]``): ``main(out, quick, lms, n=, T=)`` at a chosen size, its files printed.

    Parameters
    ----------
    main : callable
        The figure's ``main(out_dir, quick, lms, n=None, T=None)``.
    name : str
        The figure's name (the help text's).
    sizes : str
        Its default sizes, for the help text (e.g. ``"100 x 200"``).
    """
    import argparse
    import pathlib

    ap = argparse.ArgumentParser(description=f"{name} at a chosen size" + (f" (python -m paper_figs --only {name}: {sizes})" if sizes else ""))
    ap.add_argument("--out", type=pathlib.Path, required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--lm", action="append", help="LM (default lfqa)")
    ap.add_argument("--n", type=int, help="texts per configuration")
    ap.add_argument("--T", type=int, help="tokens per text")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    print(main(a.out, a.quick, a.lm, n=a.n, T=a.T))
