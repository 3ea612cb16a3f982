"""Aggregates of a sweep's rows, per (configuration, attack): TPR at each FPR with Clopper-Pearson
intervals, mean KL and realised DG per token, and the empirical FPR on the control texts.

A text is detected at level alpha iff its exact p-value is <= alpha (``log10_p <= log10 alpha``),
as in :func:`sims.experiments.evaluate.evaluate`; seeds and chunks of a configuration are pooled.
With the metrics ``peek_log10_p`` / ``anytime_log10_p`` in the grid, the share of texts that naive
every-prefix testing and the anytime-valid test flag at each FPR, among the generated texts
(``peek_rate_at_*``, ``anytime_rate_at_*``) and the control texts (``peek_null_rate_at_*``, ...),
with the same intervals: for algorithm ``none`` the generated texts are nulls, so the first pair
is a false-positive rate.
The chunk files are read one at a time (one configuration each), so a sweep of 1e7 control texts
keeps only its rejection counts in memory.
"""

from __future__ import annotations

import pathlib

import numpy as np

from sims.experiments.evaluate import CI_LEVEL, _fpr_key, clopper_pearson
from sims.sweep.grid import Grid

#: The columns of the chunk files the summary reads (those a chunk lacks are skipped).
READ = ("config", "null", "attack", "log10_p", "kl", "dg", "entropy", "z", "tokens_to_detect", "peek_log10_p", "anytime_log10_p")
#: The optional prefix tests summarised: naive every-prefix testing (``peek``) and the anytime-valid test (``anytime``).
PEEK = ("peek", "anytime")


def _rate_columns(prefix: str, k: int, n: int, a: float) -> dict:
    lo, hi = clopper_pearson(k, n, CI_LEVEL) if n else (np.nan, np.nan)
    key = f"{prefix}_at_{_fpr_key(a)}"
    return {key: k / n if n else np.nan, f"{key}_lo": lo, f"{key}_hi": hi}


def summarize(grid: Grid, chunk_files: list[pathlib.Path]) -> list[dict]:
    """One dict per (configuration, attack) in grid order (see module docstring).

    Parameters
    ----------
    grid : sims.sweep.grid.Grid
        The grid.
    chunk_files : list of pathlib.Path
        Its chunk files, read one at a time.

    Returns
    -------
    list of dict
        Per (configuration, attack): ``config``, ``label``, ``lm``, ``algo``, ``attack``, ``n_texts``, the means
        ``kl_per_token``, ``realized_dg``, ``mean_entropy``, ``z_mean``, ``median_log10_p``,
        ``tokens_to_detect_median``; ``tpr_at_F`` with ``_lo`` / ``_hi`` Clopper-Pearson bounds at
        :data:`~sims.experiments.evaluate.CI_LEVEL` for each level F of the grid; the peek / anytime rates where
        recorded; with controls, ``n_null`` and ``empirical_fpr_at_F`` with bounds.
    """
    import pyarrow.parquet as pq

    wm: dict[tuple[str, str], dict[str, list]] = {}
    null: dict[str, np.ndarray] = {}
    null_n: dict[str, int] = {}
    levels = np.log10(np.array(grid.fprs))
    for f in chunk_files:
        t = pq.read_table(f, columns=[c for c in READ if c in pq.read_schema(f).names])
        cols = {c: t.column(c).to_numpy(zero_copy_only=False) for c in t.column_names if c not in ("config", "attack")}
        cid = t.column("config")[0].as_py()
        is_null = cols["null"]
        if is_null.any():
            lp = cols["log10_p"][is_null]
            null[cid] = null.get(cid, 0) + (lp[:, None] <= levels[None, :]).sum(axis=0)
            null_n[cid] = null_n.get(cid, 0) + lp.size
            for name in PEEK:
                if f"{name}_log10_p" in cols:
                    v = cols[f"{name}_log10_p"][is_null]
                    null[(cid, name)] = null.get((cid, name), 0) + (v[:, None] <= levels[None, :]).sum(axis=0)
        attack = t.column("attack").to_numpy(zero_copy_only=False)
        for name in np.unique(attack[~is_null]):
            sel = ~is_null & (attack == name)
            acc = wm.setdefault((cid, str(name)), {})
            for c, v in cols.items():
                if c != "null":
                    acc.setdefault(c, []).append(v[sel])
    out = []
    attacks = ["none"] + [f"{k}:{r:g}" for k, r in grid.attacks]
    for cfg in grid.configs:
        for name in attacks:
            acc = {c: np.concatenate(v) for c, v in wm.get((cfg.id, name), {}).items()}
            lp = acc.get("log10_p", np.zeros(0))
            row = dict(config=cfg.id, label=cfg.label(), lm=cfg.lm, algo=cfg.algo, attack=name, n_texts=int(lp.size))
            for c, key in (("kl", "kl_per_token"), ("dg", "realized_dg"), ("entropy", "mean_entropy"), ("z", "z_mean")):
                v = acc.get(c)
                row[key] = float(np.nanmean(v)) if v is not None and np.isfinite(v).any() else np.nan
            row["median_log10_p"] = float(np.median(lp)) if lp.size else np.nan
            ttd = acc.get("tokens_to_detect")
            row["tokens_to_detect_median"] = float(np.median(np.where(np.isnan(ttd), np.inf, ttd))) if ttd is not None and ttd.size else np.nan
            for a, lev in zip(grid.fprs, levels):
                row.update(_rate_columns("tpr", int(np.sum(lp <= lev)), lp.size, a))
            for pk in PEEK:
                v = acc.get(f"{pk}_log10_p")
                if v is not None and np.isfinite(v).any():
                    for a, lev in zip(grid.fprs, levels):
                        row.update(_rate_columns(f"{pk}_rate", int(np.sum(v <= lev)), v.size, a))
                    if grid.controls and (cfg.id, pk) in null:
                        for j, a in enumerate(grid.fprs):
                            row.update(_rate_columns(f"{pk}_null_rate", int(null[(cfg.id, pk)][j]), int(null_n.get(cfg.id, 0)), a))
            if grid.controls:
                row["n_null"] = int(null_n.get(cfg.id, 0))
                for j, a in enumerate(grid.fprs):
                    row.update(_rate_columns("empirical_fpr", int(null.get(cfg.id, np.zeros(len(levels), int))[j]), row["n_null"], a))
            out.append(row)
    return out


def _cell(x) -> str:
    return "-" if not np.isfinite(x) else (f"{x:.3g}" if abs(x) < 1e4 else f"{x:.3e}")


def _own_dedup(grid: Grid) -> str:
    """`` (synthid: context-mask)``: the algorithms whose family dedups its own way (:func:`sims.sweep.grid.dedup_rule`)."""
    own = {a: r for a, r in grid.dedup_rules().items() if r not in ("pairs", "off")}
    return f" ({', '.join(f'{a}: {r}' for a, r in own.items())})" if own else ""


def markdown(grid: Grid, rows: list[dict]) -> str:
    """The summary as a markdown table (rates with their Clopper-Pearson intervals).

    Parameters
    ----------
    grid : sims.sweep.grid.Grid
        The grid (its settings head the page).
    rows : list of dict
        The rows of :func:`summarize`.

    Returns
    -------
    str
        The markdown page of ``summary.md``.
    """
    fk = [_fpr_key(a) for a in grid.fprs]
    head = ["configuration", "attack", "texts", "KL / token", "realised DG"] + [f"TPR at {k} [{int(CI_LEVEL * 100)}% CI]" for k in fk]
    if grid.controls:
        head += ["control texts"] + [f"empirical FPR at {k} [CI]" for k in fk]
    lines = [f"# Sweep summary: {pathlib.Path(grid.path).name}", "",
             f"{grid.n} texts x {grid.T} tokens per configuration and seed (seeds {list(grid.seeds)}), key {grid.key}, "
             f"dedup {'on' if grid.dedup else 'off'}{_own_dedup(grid)}; a text is detected when its exact p-value is <= the FPR.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["label"], r["attack"], str(r["n_texts"]), _cell(r["kl_per_token"]), _cell(r["realized_dg"])]
        cells += [f"{_cell(r[f'tpr_at_{k}'])} [{_cell(r[f'tpr_at_{k}_lo'])}, {_cell(r[f'tpr_at_{k}_hi'])}]" for k in fk]
        if grid.controls:
            cells += [str(r["n_null"])] + [f"{_cell(r[f'empirical_fpr_at_{k}'])} [{_cell(r[f'empirical_fpr_at_{k}_lo'])}, "
                                           f"{_cell(r[f'empirical_fpr_at_{k}_hi'])}]" for k in fk]
        lines.append("| " + " | ".join(cells) + " |")
    peek = [r for r in rows if any(k.startswith(("peek_rate_at_", "anytime_rate_at_")) for k in r)]
    if peek:
        lines += ["", "Peeking: share of the generated texts flagged at some prefix by naive every-prefix testing "
                  "(exact fixed-length p-value of each prefix <= FPR) and by the anytime-valid e-process (for algorithm "
                  f"none: false-positive rates) [{int(CI_LEVEL * 100)}% Clopper-Pearson].", "",
                  "| configuration | attack | texts | " + " | ".join(f"{w} at {k}" for k in fk for w in ("naive", "anytime")) + " |",
                  "|" + "---|" * (3 + 2 * len(fk))]
        for r in peek:
            cells = [r["label"], r["attack"], str(r["n_texts"])]
            cells += [f"{_cell(r.get(f'{w}_rate_at_{k}', np.nan))} [{_cell(r.get(f'{w}_rate_at_{k}_lo', np.nan))}, "
                      f"{_cell(r.get(f'{w}_rate_at_{k}_hi', np.nan))}]" for k in fk for w in ("peek", "anytime")]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
