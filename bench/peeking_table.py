"""The peeking table of docs/results/tab_peeking_sweep.md from finished sweeps of examples/sweep_peeking.toml (issue 30):
``python bench/peeking_table.py OUT_DIR ...`` (folders without a summary are skipped)."""
import json
import pathlib
import sys

import pyarrow.parquet as pq

rows = []
for d in sys.argv[1:]:
    d = pathlib.Path(d)
    if not (d / "summary.parquet").exists():
        continue
    g = json.loads((d / "grid.json").read_text())["grid"]
    for r in pq.read_table(d / "summary.parquet").to_pylist():
        out = dict(lm=r["lm"], T=g["T"], n=r["n_texts"], seed=g["seeds"][0], gamma=0.25, dedup=g["dedup"])
        for a in ("1e-4", "1e-6"):
            for w, col in (("fixed", "tpr"), ("naive", "peek_rate"), ("anytime", "anytime_rate")):
                out[f"{w}_{a}"] = [r[f"{col}_at_{a}"], r[f"{col}_at_{a}_lo"], r[f"{col}_at_{a}_hi"], round(r[f"{col}_at_{a}"] * r["n_texts"])]
        rows.append(out)
f = lambda v: f"{v[0]:.3g} ({v[3]}) [{v[1]:.3g}, {v[2]:.3g}]"
lines = ["# What peeking costs, through the sweep engine (issue 30)", "",
         "Null texts (algorithm none) scored by the red-green detector, gamma 0.25, dedup, key 15485863, grid seed 0, h = 1.",
         "Rates = share of the n null texts flagged (count in parentheses) with exact 95 % Clopper-Pearson intervals:",
         "fixed = the exact fixed-length p-value of the whole text <= alpha; naive = some prefix's exact fixed-length p-value <= alpha",
         "(stop at the first prefix below alpha); anytime = the red-green e-process (20-bet mixture) reaches 1/alpha at some prefix.", "",
         "| LM | T | null texts | fixed 1e-4 | naive 1e-4 | anytime 1e-4 | fixed 1e-6 | naive 1e-6 | anytime 1e-6 |", "|" + "---|" * 9]
for r in rows:
    lines.append(f"| {r['lm']} | {r['T']} | {r['n']} | " + " | ".join(f(r[f"{w}_{a}"]) for a in ("1e-4", "1e-6") for w in ("fixed", "naive", "anytime")) + " |")
lines += ["", "Commands: `nice -n 10 python -m sims sweep examples/sweep_peeking.toml --out out/peek_u200 --workers 0 --threads 1` "
          "(uniform, T = 200); the same grid with T = 1000, chunk 10000 (uniform); lm = news, n = 20000, chunk 2000; lm = loopy, n = 200000, chunk 10000."]
pathlib.Path("docs/results/tab_peeking_sweep.md").write_text("\n".join(lines) + "\n")
pathlib.Path("docs/results/tab_peeking_sweep.json").write_text(json.dumps(rows, indent=1))
print("\n".join(lines))
