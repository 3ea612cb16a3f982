"""Table watermark-runtime: end-to-end generation time of no watermark, SRL, EMS, UW, ATW and
DualGA in one run (batch 16 x 300 tokens), with the overhead over no watermark in percent (on a real LM:
over plain sampling, the loop engine without a processor; its ``none`` row keeps exact records).

Each algorithm is timed ``REPS`` times after one warm-up call (Numba compilation excluded),
interleaved so that machine load hits all alike; the minimum is reported.  On a synthetic
LM the "model" is cheap, so overheads are far larger than the paper's on an 8B model; on a real
LM (after the torch merge) the same table measures the logits processors against the forward pass.
"""

from __future__ import annotations

import pathlib
import time

from paper_figs._data import generations, is_synthetic, sized
from paper_figs._out import md_table, write

TITLE = "End-to-end generation time per watermark (batch 16 x 300 tokens), overhead over no watermark"
ALGOS = [("none", {}), ("srl", dict(gamma=0.25, delta=2.0)), ("ems", {}), ("uw-gamma", {}), ("atw", dict(delta=2.0)), ("dualga", dict(Delta=0.3))]
PAPER_OVERHEAD_PCT = None  # the paper reports seconds per batch on its GPU; only the ordering is compared


def _plain(lm: str, _algo: str, n: int, T: int, seed: int, **_):
    """Plain sampling on a real LM: the loop engine without a processor (no records), the paper's
    "no watermark"; the ``none`` row keeps float64 G and entropy records, which costs time."""
    from sims.lm.real.model import load, sampled_vocab
    from sims.lm.real.prompts import prompt_ids
    from sims.torch_backend.generate_torch import generate_with_processor

    model, tok = load(lm)
    V = sampled_vocab(model, tok)
    return generate_with_processor(model, prompt_ids("lfqa", n, tokenizer=tok, vocab_size=V, seed=seed), T, None, seed=seed, vocab_size=V)


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    """Time end-to-end generation of each watermark on one LM and tabulate the overhead over no watermark.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: 16 texts of 60 tokens at V = 2000 and 2 repetitions, instead of 16 of 300 and 5.
    lms : sequence of str, optional
        LMs of ``python -m paper_figs --lm``: its first is used (default ``news``).

    Returns
    -------
    list of pathlib.Path
        The files written: tab_runtime.png, tab_runtime.json and tab_runtime.md (:func:`paper_figs._out.write`).
    """
    lm = (lms or ("news",))[0]
    n, T, reps = (16, 60, 2) if quick else (16, 300, 5)
    n, T = sized(lm, n, T)
    reps = reps if is_synthetic(lm) else 2  # a real LM on a CPU: the minimum of 2 timed runs
    V = 2000 if quick else None
    runs = [(a, p, generations) for a, p in ALGOS] + ([] if is_synthetic(lm) else [("plain", {}, _plain)])
    times = {a: [] for a, _, _ in runs}
    for a, p, run in runs:
        run(lm, a, n, min(T, 8), 0, vocab_size=V, **p)  # warm-up (compilation, first calls); a few tokens do it
    for r in range(reps):
        for a, p, run in runs:
            t0 = time.perf_counter()
            run(lm, a, n, T, r, vocab_size=V, **p)
            times[a].append(time.perf_counter() - t0)
    best = {a: min(v) for a, v in times.items()}
    base = "none" if is_synthetic(lm) else "plain"  # overheads over plain sampling on a real LM
    over = {a: 100.0 * (best[a] / best[base] - 1.0) for a in best}
    summary = dict(lm=lm, n=n, T=T, reps=reps, vocab_size=V, baseline=base, seconds=best, overhead_pct=over, all_seconds=times)
    table = md_table(["watermark", f"seconds (min of {reps})", f"overhead % over {base}"], [[a, best[a], over[a]] for a in best])
    return write(out_dir, "tab_runtime", summary, table + f"\n\n{lm}, batch {n} x {T} tokens.", TITLE)
