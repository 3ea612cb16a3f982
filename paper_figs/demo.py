"""``python -m paper_figs.demo`` (``make demo``): the main job on the synthetic LMs, in a few minutes.

Writes into ``--out`` (default ``out/demo``): ``report.md`` (every table and the figures), the figures
(``fig_*.png`` with their JSON), ``proofs_check/report.md`` and ``demo.log``, which keeps whatever the parts
printed (the proofs_check rows, progress, warnings).  Standard output gets a summary only: one line per
part with the seconds it took, then the paths of the report, the figures, the proofs_check report and the log.

The parts and where their time goes:

1. *Theory*: the certainty-equivalent design table and one hindsight optimum (closed forms and one dual
   solve, well under a second).
2. *Online controllers*: DualGA, SRL and backpressure on a regime-switching G_t process in the reduced
   simulator (:mod:`sims.reduced`), 32 replications of 1e5 steps each, with the hindsight optimum of each
   replication.  On an empty Numba cache this part compiles the reduced simulator's kernels, which costs
   several times the simulation itself.
3. *Watermarks on the synthetic LMs*: five configurations on ``news`` and ``lfqa``, 100 watermarked and
   100 unwatermarked texts of 200 tokens each, scored with the exact null.  The LMs are the presets at a
   vocabulary of ``VOCAB`` ids (the presets have 32,000): EMS and UW-gamma build p_t over the whole
   vocabulary at every step, so their cost grows with it (at 32,000 these four runs were the largest share
   of the demo's warm time), while the table's distortion and detection numbers stay within their Monte Carlo error (the
   LMs' entropy profile does not depend on the vocabulary's size).  On an empty cache this part compiles
   the generator kernel :func:`sims.watermarks.generate._generate` (one signature for every algorithm,
   parallel: the costliest compile of the demo) and the red-green and EMS scans.
4. *Figures* at their ``--quick`` sizes: convergence (reduced simulator), Pareto (SRL, DualGA, SynthID,
   seeding schemes on both LMs), robustness (every attack on lfqa), repetition (the looping LM).  On an
   empty cache the Pareto figure compiles SynthID's tournament generator and the seeded and tournament scans.
5. *proofs_check --quick* of every result of the paper (:mod:`proofs_check`), less the power planner's
   check (``check_power_plan``, a check of the package's planner against simulation on two LMs, which
   would take longer than all the others together): ``make proofs`` runs it.

On an empty Numba cache (a fresh clone, or any edit to ``theory/`` or ``sims/``: see
:mod:`theory._numba_cache`) most of the time is Numba compiling the kernels above, each once; the kernels
compiled are those the parts call, nothing else.  A second run loads them from the cache and its time is
the computing itself, proofs_check the largest part (its CVXPY solves and the DualGA theorem's simulations).
"""

from __future__ import annotations

import argparse
import contextlib
import pathlib
import sys
import time
import warnings

import numpy as np

import theory

HELP = "run the main job on the synthetic LMs: theory tables, simulations, figures, proofs_check; a summary on stdout, the report on disk"

DELTAS = (0.1, 0.2, 0.3, 0.4, 0.5)
LMS = ("news", "lfqa")
VOCAB = 4000  # the synthetic presets' vocabulary in part 3 (the module docstring says why)
N_TEXTS, T_TOKENS = 100, 200
TOKEN_CONFIGS = (("srl", dict(delta=2.0, gamma=0.25)), ("dualga", dict(Delta=0.2)), ("dualga", dict(Delta=0.3)), ("ems", {}), ("uw-gamma", {}))
FIGURES = ("fig_convergence", "fig_pareto", "fig_robustness", "fig_repetition")
SKIPPED_CHECKS = ("check_power_plan",)  # run by `make proofs` (module docstring)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``python -m paper_figs.demo`` to ``parser``: ``--out`` (default ``out/demo``) and ``--seed``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        Modified in place.
    """
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("out/demo"), help="output folder")
    parser.add_argument("--seed", type=int, default=0)


def theory_table() -> str:
    """Certainty-equivalent design table (appendix Choosing Green List Ratio).

    For each Delta of :data:`DELTAS`: gamma*, delta*(Delta, gamma*), the certainty-equivalent KL per token and the
    Bretagnolle-Huber bound on alpha + beta at T = 200.

    Returns
    -------
    str
        A markdown table.
    """
    rows = ["| Delta | gamma* | delta*(Delta, gamma*) | KL per token (CE) | BH bound on alpha+beta, T=200 |", "|---|---|---|---|---|"]
    for D in DELTAS:
        g = theory.gamma_star(D)
        kl = theory.kl_certainty_equivalent(D, g)
        rows.append(f"| {D:.1f} | {g:.4f} | {theory.delta_star(D, g):.4f} | {kl:.4f} | {theory.bretagnolle_huber(200 * kl):.3e} |")
    return "\n".join(rows)


def reduced_table(seed: int) -> str:
    """Online controllers vs the hindsight optimum on a regime-switching G_t process.

    DualGA, SRL (delta = 1) and backpressure, 32 replications of 1e5 steps at Delta = 0.2
    (:func:`sims.reduced.runner.simulate`).

    Parameters
    ----------
    seed : int
        The simulation's seed.

    Returns
    -------
    str
        A markdown table: average KL, OPT, regret, average DG, its spread across replications, steps per second.
    """
    from sims.reduced.runner import simulate

    rows = ["| controller | avg KL | OPT | regret | avg DG | sd of DG across replications | steps/s |", "|---|---|---|---|---|---|---|"]
    for algo, kw in (("dualga", {}), ("srl", dict(delta=1.0)), ("backpressure", {})):
        r = simulate(algo, "regime:0.001,2,5,5,2", T=100_000, reps=32, seed=seed, Delta=0.2, **kw)
        name = f"{algo} {' '.join(f'{k}={v:g}' for k, v in kw.items())}"
        rows.append(f"| {name} | {r.avg_kl:.4f} | {r.opt_kl:.4f} | {r.regret:+.4f} | {r.avg_dg:.4f} | {r.dg_spread:.4f} | {r.steps_per_s:.2e} |")
    return "\n".join(rows)


def token_table(seed: int) -> str:
    """Detection and distortion of the main algorithms on the two synthetic presets (at ``VOCAB`` ids).

    Each of :data:`TOKEN_CONFIGS` on each of :data:`LMS`, :data:`N_TEXTS` texts of :data:`T_TOKENS` tokens
    (:func:`sims.experiments.evaluate.evaluate`).

    Parameters
    ----------
    seed : int
        The texts' seed.

    Returns
    -------
    str
        A markdown table: KL per token, realised DG, TPR at 1e-4 and 1e-6, empirical FPR at 1e-4 with its 95%
        interval, median log10 p and tokens to detect.
    """
    from paper_figs._data import figure_lm
    from sims.experiments.evaluate import evaluate

    rows = ["| LM | algorithm | KL/token | realised DG | TPR @1e-4 | TPR @1e-6 | FPR @1e-4 (95% CI) | median log10 p | tokens to detect |",
            "|---|---|---|---|---|---|---|---|---|"]
    for lm in LMS:
        model = figure_lm(lm, VOCAB)
        for algo, kw in TOKEN_CONFIGS:
            r = evaluate(model, algo, n=N_TEXTS, T=T_TOKENS, seed=seed, **kw)
            lo, hi = r["empirical_fpr_at_1e-4_ci95"]
            ttd = "-" if r["tokens_to_detect_median"] is None else f"{r['tokens_to_detect_median']:.0f}"
            label = f"{algo} " + ", ".join(f"{k}={v:g}" for k, v in kw.items())
            rows.append(f"| {lm} | {label} | {r['kl_per_token']:.3f} | {r['realized_dg']:.3f} | {r['tpr_at_1e-4']:.2f} | {r['tpr_at_1e-6']:.2f} | "
                        f"{r['empirical_fpr_at_1e-4']:.2f} [{lo:.2f}, {hi:.2f}] | {r['median_log10_p']:.1f} | {ttd} |")
    return "\n".join(rows)


class Summary:
    """One stdout line per part (its label, then its seconds); what a part prints or warns goes to the log instead.

    Progress bars of :mod:`sims.core.progress` are hidden.

    Parameters
    ----------
    log : file
        The log, open for writing.
    stdout : file, optional
        Where the summary lines go (default ``sys.stdout``).
    """

    def __init__(self, log, stdout=None):
        self.log, self.stdout, self.times = log, stdout or sys.stdout, []

    def say(self, line: str) -> None:
        """Print one line to the summary's stdout.

        Parameters
        ----------
        line : str
            The line.
        """
        print(line, file=self.stdout, flush=True)

    def _warning(self, message, category, filename, lineno, file=None, line=None) -> None:
        self.log.write(warnings.formatwarning(message, category, filename, lineno, line))

    @contextlib.contextmanager
    def part(self, label: str):
        """Run one part of the demo: its label and seconds on stdout, its output and warnings in the log.

        Parameters
        ----------
        label : str
            The part's label.

        Yields
        ------
        None
            Inside the block, stdout and stderr go to the log and progress bars are hidden; a failure prints
            ``failed`` and propagates.
        """
        from sims.core.progress import shown

        print(f"  {label:<72s}", end="", file=self.stdout, flush=True)
        print(f"== {label}", file=self.log, flush=True)
        t0 = time.perf_counter()
        try:
            with contextlib.redirect_stdout(self.log), contextlib.redirect_stderr(self.log), shown(False), warnings.catch_warnings():
                warnings.showwarning = self._warning
                yield
        except BaseException:
            print(" failed", file=self.stdout, flush=True)
            raise
        dt = time.perf_counter() - t0
        self.times.append((label, dt))
        print(f"{dt:6.1f} s", file=self.stdout, flush=True)
        print(f"== {label}: {dt:.1f} s", file=self.log, flush=True)


def run(args, stdout=None) -> int:
    """Run the demo into ``args.out``: theory tables, online controllers, watermarks, figures and proofs_check.

    Writes ``report.md``, ``demo.log``, the figures and ``proofs_check/`` there, and prints one line per part.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of :func:`add_arguments` (``out``, ``seed``).
    stdout : file, optional
        Where the summary goes (default ``sys.stdout``).

    Returns
    -------
    int
        The exit status of ``proofs_check --quick``: 0 when every check passed, 1 otherwise.

    Raises
    ------
    ValueError
        If ``--out`` cannot be made a writable folder.
    """
    import importlib
    import json

    from proofs_check.__main__ import main as proofs
    from proofs_check.__main__ import modules
    from sims.cli.checks import writable_folder

    out = writable_folder("out", args.out)
    t0 = time.perf_counter()
    sections: list[str] = []
    figures: list[pathlib.Path] = []
    checks = [m for m in modules() if m not in SKIPPED_CHECKS]
    with open(out / "demo.log", "w") as log:
        s = Summary(log, stdout)
        s.say(f"demo: the main job on the synthetic LMs, seed {args.seed}; each part's output in {out / 'demo.log'}")
        with s.part("1. theory: design table and hindsight optimum"):
            G = np.random.default_rng(args.seed).beta(2.0, 2.0, size=200)
            r = theory.offline_opt(G, 0.2)
            sections += ["# Watermarking statistics: demo report", "",
                         "Everything below was computed by `make demo` (`python -m paper_figs.demo`) on the synthetic LMs; seed "
                         f"{args.seed}.", "",
                         "## 1. Certainty-equivalent design (appendix Choosing Green List Ratio)", "", theory_table(), "",
                         "## 2. Hindsight optimum on one Beta(2,2) sequence of 200 green masses", "",
                         f"OPT(0.2) = {r.value:.6f} nats/token at delta* = lambda* = {r.delta:.6f}; duality gap {r.duality_gap:.1e}.", ""]
        with s.part("2. online controllers: 3 controllers x 32 replications x 1e5 steps"):
            sections += ["## 3. Online controllers on a regime-switching G_t process (T = 1e5, 32 replications, Delta = 0.2)", "",
                         reduced_table(args.seed), "",
                         "DualGA meets the DG target in every replication (small spread) at a KL close to the hindsight optimum; "
                         "a fixed SRL boost misses or overshoots depending on the regime.", ""]
        with s.part(f"3. watermarks: {len(TOKEN_CONFIGS)} configurations x {len(LMS)} LMs, {N_TEXTS} texts x {T_TOKENS} tokens"):
            sections += [f"## 4. Watermarks on the synthetic LMs ({N_TEXTS} texts x {T_TOKENS} tokens, vocabulary {VOCAB}; exact KL; exact null; "
                         f"as many unwatermarked texts for the FPR)", "", token_table(args.seed), ""]
        sections += ["## 5. Figures", ""]
        for name in FIGURES:
            with s.part(f"4. figure {name} (quick sizes)"):
                files = importlib.import_module(f"paper_figs.{name}").main(out, True)
            figures += [f for f in files if f.suffix == ".png"]
            sections += [f"![{name}]({f.name})" for f in files if f.suffix == ".png"]
        with s.part(f"5. proofs_check --quick, {len(checks)} of {len(checks) + len(SKIPPED_CHECKS)} modules"):
            code = proofs(["--quick", "--out", str(out / "proofs_check"), *(a for m in checks for a in ("--only", m))])
        rows = json.loads((out / "proofs_check" / "report.json").read_text())["checks"]
        passed = sum(row["passed"] for row in rows)
        total = time.perf_counter() - t0
        sections += ["", "## 6. proofs_check --quick", "",
                     f"{passed}/{len(rows)} checks passed (exit status {code}) in {len(checks)} modules, all but {', '.join(SKIPPED_CHECKS)} "
                     "(`make proofs` runs every module); full table in [proofs_check/report.md](proofs_check/report.md).", "",
                     "## Times", "", "| part | seconds |", "|---|---|", *(f"| {label} | {dt:.1f} |" for label, dt in s.times),
                     f"| total | {total:.1f} |"]
        report = out / "report.md"
        report.write_text("\n".join(sections) + "\n")
        s.say(f"proofs_check: {passed}/{len(rows)} checks passed" + ("" if code == 0 else f" (exit status {code}: see the report)"))
        s.say(f"total {total:.0f} s")
        s.say(f"report:       {report}")
        s.say(f"figures:      {', '.join(map(str, figures))}")
        s.say(f"proofs_check: {out / 'proofs_check' / 'report.md'}")
        s.say(f"log:          {out / 'demo.log'}")
    return code


def main(argv: list[str] | None = None) -> int:
    """Run ``python -m paper_figs.demo``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments; None reads the command line.

    Returns
    -------
    int
        :func:`run`'s exit status, or 2 on bad input (its message on stderr).
    """
    from sims.cli.main import Parser

    parser = Parser(prog="python -m paper_figs.demo", description=HELP)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
