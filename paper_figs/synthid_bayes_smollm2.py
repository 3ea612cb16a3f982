"""SynthID-Text's Bayesian detector trained on SmolLM2 texts, calibrated at a chosen FPR on held-apart nulls (issue 32).

Not a ``fig_`` / ``tab_`` module: it loads SmolLM2 (about 40 min at 1 thread), so ``python -m paper_figs`` does not run it.

SmolLM2-135M-Instruct (:func:`sims.lm.real.model.load`, the cached local copy) writes ``T``
tokens after each ``news`` prompt, watermarked by tournament sampling
(:class:`sims.torch_backend.tournament.TournamentProcessor`, m layers, key ``KEY``) or unwatermarked.
Four disjoint sets of texts (disjoint sampling rows):

* ``train``: watermarked texts, the g-values the :class:`~sims.detect.stats.tournament_scores.BayesianDetector`
  is fitted on;
* ``test_wm``: other watermarked texts: the detector's TPR at the calibrated threshold, beside the
  mean and weighted-mean scores' exact p-values at the same FPR;
* ``cal_null`` / ``test_null``: unwatermarked SmolLM2 texts, each scored under ``NULL_KEYS`` keys
  (a text that does not depend on a key is a null text for it): the threshold is the empirical
  ``1 - fpr`` quantile on ``cal_null``, and the FPR it achieves is measured on ``test_null``,
  texts the calibration never saw.

Every rate comes with its Clopper-Pearson 95 % interval and its count.  The null scores of one text
under different keys are independent for an ideal PRF given the text, but share the text's repeated
contexts (the number of scored tokens), so the interval on ``test_null`` is also given over texts
alone (one key).

``python -m paper_figs.synthid_bayes_smollm2 --probe`` times generation (tokens/s at the
threads given) to choose the sizes; the full run writes ``tab_synthid_bayes_smollm2.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import numpy as np

KEY = 15485863
NULL_KEYS = 10  # keys each null text is scored under (KEY and KEY + 1 .. KEY + 9)
TITLE = "SynthID-Text's Bayesian detector on SmolLM2-135M-Instruct texts: fitted on watermarked texts, calibrated on held-apart nulls"


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact two-sided binomial confidence interval of a rate ``k / n``.

    Parameters
    ----------
    k : int
        Successes, in [0, n].
    n : int
        Trials, >= 1.
    level : float, optional
        Confidence level.

    Returns
    -------
    lo, hi : float

    Raises
    ------
    ValueError
        If ``k`` or ``n`` is out of range.
    """
    from scipy.stats import beta

    if not (0 <= k <= n) or n < 1:
        raise ValueError(f"k must be in [0, n] and n in [1, inf); got k={k}, n={n}")
    a = 1.0 - level
    lo = 0.0 if k == 0 else float(beta.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a / 2, k + 1, n - k))
    return lo, hi


def _generate(model, tok, n: int, T: int, row0: int, m: int, watermark: bool):
    from sims.lm.real.prompts import prompt_ids
    from sims.torch_backend.generate_torch import generate_with_processor
    from sims.torch_backend.tournament import TournamentProcessor

    V = len(tok)
    allp = prompt_ids("news", None, tokenizer=tok)
    rows = np.arange(row0, row0 + n)
    prompts = [allp[r % len(allp)] for r in rows]
    proc = TournamentProcessor(vocab_size=V, key=KEY, m=m) if watermark else None
    return generate_with_processor(model, prompts, T, proc, seed=0, rows=rows, vocab_size=V)


def _g(gen, key: int, m: int, h: int = 4):
    from sims.detect.stats.tournament_scores import g_values_of, g_words

    prompts = gen.prompts[:, -h:]
    words, scored = g_words(gen.tokens, prompts, key, h=h, lengths=gen.lengths)
    return g_values_of(words, scored, m)


def main(argv=None) -> dict:
    """Train and calibrate SynthID-Text's Bayesian detector on SmolLM2 texts (module docstring).

    Options: ``--probe`` (time generation only), ``--n-train``, ``--n-test``, ``--n-null`` (unwatermarked texts,
    half calibration half test), ``--T``, ``--m`` (tournament layers), ``--fpr``, ``--batch``, ``--threads`` and
    ``--out`` (default ``docs/results-synthid``); the full run writes ``tab_synthid_bayes_smollm2.json`` and
    ``.md`` there.

    Parameters
    ----------
    argv : list of str, optional
        The arguments; None reads the command line.

    Returns
    -------
    dict
        The results (rates with their counts and Clopper-Pearson intervals), also printed as JSON; empty with
        ``--probe``.
    """
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probe", action="store_true", help="time generation only")
    ap.add_argument("--n-train", type=int, default=24)
    ap.add_argument("--n-test", type=int, default=24)
    ap.add_argument("--n-null", type=int, default=48, help="unwatermarked texts, half calibration half test")
    ap.add_argument("--T", type=int, default=100)
    ap.add_argument("--m", type=int, default=30)
    ap.add_argument("--fpr", type=float, default=0.05)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default="docs/results-synthid")
    a = ap.parse_args(argv)
    import torch

    from sims.detect.stats.tournament_scores import BayesianDetector, score_tournament
    from sims.lm.real.model import load

    torch.set_num_threads(a.threads)
    model, tok = load("smollm2")
    if a.probe:
        t0 = time.perf_counter()
        _generate(model, tok, a.batch, a.T, 0, a.m, True)
        dt = time.perf_counter() - t0
        print(f"{a.batch} x {a.T} watermarked tokens in {dt:.1f} s: {a.batch * a.T / dt:.1f} tokens/s at {a.threads} thread(s)")
        return {}

    t0 = time.perf_counter()
    sets = {}
    row = 0
    for name, n, wm in (("train", a.n_train, True), ("test_wm", a.n_test, True), ("null", a.n_null, False)):
        parts = []
        for b in range(0, n, a.batch):
            parts.append(_generate(model, tok, min(a.batch, n - b), a.T, row + b, a.m, wm))
        sets[name] = parts
        row += n
    gen_s = time.perf_counter() - t0
    half = a.n_null // 2

    def g_of(name, key, lo=0, hi=None):
        out = [g for gen in sets[name] for g in _g(gen, key, a.m)]
        return out[lo:hi]

    det = BayesianDetector(a.m).fit(g_of("train", KEY))
    cal = [g for k in range(NULL_KEYS) for g in g_of("null", KEY + k, 0, half)]
    thr = det.calibrate(cal, a.fpr)
    test_null_all = [g for k in range(NULL_KEYS) for g in g_of("null", KEY + k, half)]
    test_null_one = g_of("null", KEY, half)
    wm = g_of("test_wm", KEY)
    res = dict(lm="smollm2", m=a.m, h=4, T=a.T, key=KEY, fpr_target=a.fpr, n_train=a.n_train, n_test_wm=a.n_test, n_null_texts=a.n_null,
               null_keys=NULL_KEYS, threshold=thr, generation_seconds=gen_s, train_scored_tokens=int(sum(len(g) for g in g_of("train", KEY))))
    rates = {}
    for label, gs in (("fpr_test_null_texts_x_keys", test_null_all), ("fpr_test_null_texts_key0", test_null_one), ("tpr_bayes", wm)):
        k = int(det.flag(gs).sum())
        rates[label] = dict(k=k, n=len(gs), rate=k / len(gs), ci95=clopper_pearson(k, len(gs)))
    for stat in ("mean", "weighted"):
        p = np.concatenate([score_tournament(gen, stat=stat).log10_p for gen in sets["test_wm"]])
        k = int((p <= np.log10(a.fpr)).sum())
        rates[f"tpr_{stat}_at_fpr"] = dict(k=k, n=p.size, rate=k / p.size, ci95=clopper_pearson(k, p.size), median_log10_p=float(np.median(p)))
    res["rates"] = rates
    res["llr_median_test_wm"] = float(np.median(det.llr(wm)))
    res["llr_median_test_null"] = float(np.median(det.llr(test_null_one)))
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tab_synthid_bayes_smollm2.json").write_text(json.dumps(res, indent=1, default=float))
    rows = [f"| {k} | {v['k']} / {v['n']} | {v['rate']:.3f} | [{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}] |" for k, v in rates.items()]
    (out / "tab_synthid_bayes_smollm2.md").write_text(
        f"# {TITLE}\n\nm = {a.m}, T = {a.T}, FPR target {a.fpr}, threshold {thr:.3g} (LLR), {a.n_train} training texts, "
        f"{a.n_null} null texts ({half} calibration x {NULL_KEYS} keys, {a.n_null - half} test), {a.n_test} watermarked test texts.\n\n"
        "| rate | count | value | 95 % CI (Clopper-Pearson) |\n|---|---|---|---|\n" + "\n".join(rows) + "\n")
    print(json.dumps(res, indent=1, default=float))
    return res


if __name__ == "__main__":
    main()
