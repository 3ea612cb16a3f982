"""Many keys, every detector family: family-wise error over K = 10, 100, 1000 keys on null texts (issue 30).

Unwatermarked texts (algorithm ``none``, seed 7) scored with each family's detector under keys
1..K (:func:`sims.detect.multiple.score_keys`, exact p-values per key); a text is a false positive
when Holm's step-down (:func:`sims.detect.multiple.holm`, valid under any dependence between the
keys) flags some key at alpha = 0.05, or, uncorrected, when some key's p-value is <= alpha.
Rates with 95 % Clopper-Pearson intervals.  Keyed orders (ITS) read the model's probabilities of
every step (n x T x V floats), so they run on the ``loopy`` preset (V = 4096) with fewer texts.
"""

from __future__ import annotations

import math
import pathlib

from paper_figs._out import md_table, write

TITLE = "Family-wise error over many keys, every detector family (Holm vs uncorrected, null texts)"
ALPHA = 0.05
SEED = 7
FAMILIES = (("srl", "redgreen"), ("ems", "ems"), ("autocov", "autocov"), ("synthid", "tournament"), ("its", "keyed"))


def fwer_rows(quick: bool) -> list[dict]:
    import sims
    from sims.detect import multiple, scores
    from sims.experiments.evaluate import clopper_pearson

    rows = []
    for algo, family in FAMILIES:
        keyed = family == "keyed"
        lm_name = "loopy" if keyed else "news"
        n, T = ((40, 30) if keyed else (100, 50)) if quick else ((300, 50) if keyed else (2000, 100))
        lm = sims.get_lm(lm_name)
        gen = sims.generate(lm, "none", n=n, T=T, seed=SEED, key=1)
        probs = scores.lm_step_probs(lm, gen) if keyed else None
        for K in (10, 100) if quick else (10, 100, 1000):
            lp, _ = multiple.score_keys(gen, range(1, K + 1), lm, algo=algo, dedup=True, step_probs=probs)
            row = dict(algo=algo, family=family, lm=lm_name, K=K, n=n, T=T, alpha=ALPHA, seed=SEED)
            for rule, hit in (("holm", multiple.holm(lp, ALPHA).any(axis=0)), ("uncorrected", (lp <= math.log10(ALPHA)).any(axis=0))):
                k = int(hit.sum())
                row[rule], row[f"{rule}_ci"] = k / n, [float(x) for x in clopper_pearson(k, n)]
            rows.append(row)
    return rows


def main(out_dir: pathlib.Path, quick: bool, lms=None) -> list[pathlib.Path]:
    rows = fwer_rows(quick)
    table = md_table(["algo (family)", "LM", "keys K", "null texts x tokens", "Holm FWER", "95% CI", "uncorrected", "95% CI"],
                     [[f"{r['algo']} ({r['family']})", r["lm"], r["K"], f"{r['n']} x {r['T']}", r["holm"], f"[{r['holm_ci'][0]:.3g}, {r['holm_ci'][1]:.3g}]",
                       r["uncorrected"], f"[{r['uncorrected_ci'][0]:.3g}, {r['uncorrected_ci'][1]:.3g}]"] for r in rows])
    table += f"\n\nalpha = {ALPHA}, null texts of algorithm none (seed {SEED}), keys 1..K, dedup for red-green and EMS."
    return write(out_dir, "tab_keys_fwer", dict(alpha=ALPHA, seed=SEED, quick=quick, rows=rows), table, TITLE)


if __name__ == "__main__":
    import sys

    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "docs/results")
    out.mkdir(parents=True, exist_ok=True)
    print(main(out, quick="--quick" in sys.argv))
