"""Run the benchmarks: ``python -m bench [--only NAME] [--out DIR]``.

Results go to ``out/bench/NAME.json``; the committed results in ``bench/results/`` change only
on purpose (``--out bench/results``).  How long each benchmark took is kept apart from its numbers, in
``durations.json`` of the results folder (:data:`DURATIONS`: the seconds of each benchmark's last run, with the
date), so a duration measured on a busy machine never replaces numbers measured on a quiet one.  Before the run,
one line gives the expected total; before a benchmark starts, its line says which of how many it is and how long it
took last time (:func:`expected_seconds`); while it runs, a line every ``--every`` seconds (default 30) says how long
it has run, against that time (:class:`Heartbeat`)."""

from __future__ import annotations

import importlib
import json
import pathlib
import pkgutil
import platform
import sys
import threading
import time

import bench

RESULTS = pathlib.Path(__file__).parent / "results"  # committed: written only with --out bench/results
OUT = pathlib.Path("out/bench")
DURATIONS = "durations.json"  #: in a results folder: {"seconds": {NAME: s}, "date": {NAME: "YYYY-MM-DD"}}


def names() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))


def expected_seconds(name: str, results: pathlib.Path = RESULTS) -> float | None:
    """The seconds benchmark ``name`` took in its last run recorded in ``results``' :data:`DURATIONS`.

    Parameters
    ----------
    name : str
        The benchmark (``bench_detect``, ...).
    results : pathlib.Path, optional
        The results folder (default the committed one).

    Returns
    -------
    float or None
        Its seconds; None where the folder records no duration for it (or the file is unreadable).
    """
    try:
        return float(json.loads((results / DURATIONS).read_text())["seconds"][name])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record_duration(name: str, seconds: float, out: pathlib.Path) -> None:
    """Write ``name``'s duration into ``out``'s :data:`DURATIONS`, keeping the other benchmarks' entries.

    Parameters
    ----------
    name : str
        The benchmark.
    seconds : float
        How long it took.
    out : pathlib.Path
        The results folder written.
    """
    path = out / DURATIONS
    try:
        book = json.loads(path.read_text())
    except (OSError, ValueError):
        book = {}
    book.setdefault("seconds", {})[name] = round(seconds, 1)
    book.setdefault("date", {})[name] = time.strftime("%Y-%m-%d")
    path.write_text(json.dumps({k: dict(sorted(v.items())) for k, v in sorted(book.items())}, indent=2) + "\n")


def _seconds(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


class Heartbeat:
    """A line every ``every`` seconds while a benchmark runs: its elapsed time, and its share of the expected time where
    its committed result records one (``   ... 60 s of about 120 s (50 %)``)."""

    def __init__(self, expected: float | None, every: float = 30.0, out=None):
        self.expected, self.every, self.out = expected, every, out or sys.stdout
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def line(self, elapsed: float) -> str:
        if self.expected:
            return f"   ... {_seconds(elapsed)} of about {_seconds(self.expected)} ({100 * elapsed / self.expected:.0f} %)"
        return f"   ... {_seconds(elapsed)} so far"

    def _run(self):
        t0 = time.perf_counter()
        while not self._stop.wait(self.every):
            print(self.line(time.perf_counter() - t0), file=self.out, flush=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def plan(todo: list[str], results: pathlib.Path = RESULTS) -> str:
    """The line printed before the run: how many benchmarks, and their expected total from the committed results."""
    known = [t for t in (expected_seconds(n, results) for n in todo) if t is not None]
    total = f"about {_seconds(sum(known))} expected" if known else "no expected duration recorded"
    missing = len(todo) - len(known)
    unknown = f" ({missing} with no recorded duration)" if known and missing else ""
    return f"{len(todo)} benchmark{'s' if len(todo) != 1 else ''}, {total}{unknown} (from {results})"


def main(argv=None) -> int:
    from sims.cli.checks import writable_folder
    from sims.cli.main import Parser

    ap = Parser(prog="python -m bench")
    ap.add_argument("--only", action="append", choices=names())
    ap.add_argument("--out", type=pathlib.Path, default=OUT, help=f"results folder (default {OUT}; the committed ones: {RESULTS})")
    ap.add_argument("--every", type=float, default=30.0, help="seconds between progress lines while a benchmark runs (default 30)")
    args = ap.parse_args(argv)
    try:
        writable_folder("out", args.out)
    except ValueError as exc:
        ap.error(str(exc))
    todo = args.only or names()
    print(plan(todo, RESULTS), flush=True)
    for k, name in enumerate(todo, 1):
        took = expected_seconds(name, RESULTS)
        print(f"== [{k}/{len(todo)}] {name} ({'about ' + format(took, '.0f') + ' s last time' if took is not None else 'duration not recorded yet'})",
              flush=True)
        t0 = time.perf_counter()
        with Heartbeat(took, args.every):
            res = importlib.import_module(f"bench.{name}").main([])
        seconds = time.perf_counter() - t0
        if res.get("skipped"):
            print(f"   skipped: {res['skipped']}")
            continue
        print(f"   done in {seconds:.0f} s", flush=True)
        res = {"machine": platform.processor() or platform.machine(), "date": time.strftime("%Y-%m-%d"), **res}
        (args.out / f"{name}.json").write_text(json.dumps(res, indent=2) + "\n")
        record_duration(name, seconds, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
