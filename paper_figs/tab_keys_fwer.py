r"""Many keys, every detector family: family-wise error over K = 10, 100, 1000 keys on null texts (issue 30).

Unwatermarked texts (algorithm ``none``, seed 7, drawn by the exact O(log V) sampler
:func:`sims.watermarks.null_sampler.generate_null`) scored with each family's detector under keys
1..K (:func:`sims.detect.families.detectors.score_keys`: red-green and EMS hash every key in one Numba pass,
exact p-values per key); a text is a false positive when Holm's step-down
(:func:`sims.detect.multiple.holm`) flags some key at alpha = 0.05, or, uncorrected, when some key's
p-value is <= alpha.  Rates with exact 95 % Clopper-Pearson intervals.  Keyed orders (ITS) read the
model's probabilities of every step (n x T x V floats) and are scored key by key, so they run on the
``loopy`` preset (V = 4096) with fewer texts.

Why Holm holds under dependence: the K p-values of one text share its tokens (and its dedup
pattern), so they are dependent.  Holm's procedure is closed testing with Bonferroni's local tests;
on an unwatermarked text every key is a true null and it rejects some key only if
:math:`\min_k p_k \le \alpha / K`, whose probability is at most :math:`\sum_k P(p_k \le \alpha/K) \le \alpha`
by the union bound alone, whatever the joint law of the p-values, as long as each is valid
(super-uniform: exact or, for the discrete counts, conservative).
"""

from __future__ import annotations

import math
import pathlib

from paper_figs._out import md_table, write
from sims.lm.synthetic import lm_step_probs

TITLE = "Family-wise error over many keys, every detector family (Holm vs uncorrected, null texts)"
ALPHA = 0.05
SEED = 7
FAMILIES = (("srl", "redgreen"), ("ems", "ems"), ("autocov", "autocov"), ("synthid", "tournament"), ("its", "keyed"))


SIZES = dict(quick=((100, 50), (40, 30)), full=((5000, 100), (100, 50)))  # (texts, tokens): other families, keyed orders


def fwer_rows(quick: bool, sizes=None, log=None) -> list[dict]:
    """One row per (family, K): the family-wise error of Holm's step-down and of the uncorrected test on null texts.

    Parameters
    ----------
    quick : bool
        Small sizes and K in 10, 100 (else up to 1000).
    sizes : tuple, optional
        ((n, T) of the other families, (n, T) of keyed orders), default :data:`SIZES`.
    log : callable, optional
        Receives each row as it is done.

    Returns
    -------
    list of dict
        Per (algorithm, K): its family, LM, n, T, and the ``holm`` and ``uncorrected`` rates with 95 % intervals.
    """
    import sims
    from sims.detect import multiple
    from sims.detect.families import detectors
    from sims.experiments.evaluate import clopper_pearson
    from sims.watermarks.null_sampler import generate_null

    sizes = sizes or SIZES["quick" if quick else "full"]
    rows = []
    for algo, family in FAMILIES:
        keyed = family == "keyed"
        lm_name = "loopy" if keyed else "news"
        n, T = sizes[1] if keyed else sizes[0]
        lm = sims.get_lm(lm_name)
        gen = generate_null(lm.synthetic, n=n, T=T, seed=SEED, key=1)
        probs = lm_step_probs(lm, gen) if keyed else None
        for K in (10, 100) if quick else (10, 100, 1000):
            lp, _ = detectors.score_keys(gen, range(1, K + 1), lm, algo=algo, dedup=True, step_probs=probs)
            row = dict(algo=algo, family=family, lm=lm_name, K=K, n=n, T=T, alpha=ALPHA, seed=SEED)
            for rule, hit in (("holm", multiple.holm(lp, ALPHA).any(axis=0)), ("uncorrected", (lp <= math.log10(ALPHA)).any(axis=0))):
                k = int(hit.sum())
                row[rule], row[f"{rule}_ci"] = k / n, [float(x) for x in clopper_pearson(k, n)]
            rows.append(row)
            if log is not None:
                log(row)
    return rows


def table(rows: list[dict]) -> str:
    """The markdown table of :func:`fwer_rows`' rows, with the method and the command.

    Parameters
    ----------
    rows : list of dict
        The rows.

    Returns
    -------
    str
    """
    md = md_table(["algo (family)", "LM", "keys K", "null texts x tokens", "Holm FWER (count)", "95% CI", "uncorrected (count)", "95% CI"],
                  [[f"{r['algo']} ({r['family']})", r["lm"], r["K"], f"{r['n']} x {r['T']}", f"{r['holm']:.4g} ({round(r['holm'] * r['n'])})",
                    f"[{r['holm_ci'][0]:.3g}, {r['holm_ci'][1]:.3g}]", f"{r['uncorrected']:.4g} ({round(r['uncorrected'] * r['n'])})",
                    f"[{r['uncorrected_ci'][0]:.3g}, {r['uncorrected_ci'][1]:.3g}]"] for r in rows])
    return md + (f"\n\nalpha = {ALPHA}, null texts of algorithm none (seed {SEED}, exact sampler of sims.watermarks.null_sampler), keys 1..K, "
                 "dedup for red-green and EMS; exact 95 % Clopper-Pearson intervals. Method: Holm's step-down over the K keys' exact "
                 "p-values (sims.detect.multiple.holm). It is valid under any dependence between the keys' p-values (they share the "
                 "text's tokens and dedup pattern): on a null text every key is a true null and Holm flags some key only if "
                 "min_k p_k <= alpha / K, of probability <= sum_k P(p_k <= alpha / K) <= alpha by the union bound alone. The discrete "
                 "red-green counts make it conservative (SRL below 0.05). Command: `python -m paper_figs.tab_keys_fwer docs/results` "
                 "(sizes: `--n N T` for every family but ITS, `--n-keyed N T` for ITS, whose keyed-order score reads n x T x V "
                 "probabilities and is computed key by key, about 11 us per key and token at V = 4096).")


def main(out_dir: pathlib.Path, quick: bool, lms=None, sizes=None, log=None) -> list[pathlib.Path]:
    """Tabulate the family-wise error over many keys of every detector family (:func:`fwer_rows`).

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder the files are written to.
    quick : bool
        Small sizes: 100 texts of 50 tokens (keyed orders 40 of 30) and K in 10, 100, instead of 5000 of 100 (100 of
        50) and K up to 1000.
    lms : sequence of str, optional
        Ignored.
    sizes : tuple, optional
        ((n, T) of the other families, (n, T) of keyed orders); default :data:`SIZES`.
    log : callable, optional
        Receives each row as it is done.

    Returns
    -------
    list of pathlib.Path
        The files written: tab_keys_fwer.png, tab_keys_fwer.json and tab_keys_fwer.md
        (:func:`paper_figs._out.write`).
    """
    rows = fwer_rows(quick, sizes, log)
    return write(out_dir, "tab_keys_fwer", dict(alpha=ALPHA, seed=SEED, quick=quick, rows=rows), table(rows), TITLE)


if __name__ == "__main__":
    import argparse
    import json

    ap = argparse.ArgumentParser(prog="python -m paper_figs.tab_keys_fwer")
    ap.add_argument("out", nargs="?", type=pathlib.Path, default=pathlib.Path("docs/results"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, nargs=2, default=None, metavar=("N", "T"), help="texts and tokens of every family but ITS")
    ap.add_argument("--n-keyed", type=int, nargs=2, default=None, metavar=("N", "T"), help="texts and tokens of ITS (keyed order)")
    args = ap.parse_args()
    base = SIZES["quick" if args.quick else "full"]
    sizes = (tuple(args.n) if args.n else base[0], tuple(args.n_keyed) if args.n_keyed else base[1])
    args.out.mkdir(parents=True, exist_ok=True)
    print(main(args.out, args.quick, sizes=sizes, log=lambda r: print(json.dumps(r), flush=True)))
