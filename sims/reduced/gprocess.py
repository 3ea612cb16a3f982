"""Processes of green masses G_t (the reduced model of the paper's Section 3.4).

A process is a schedule over a few *laws* of G, each stored as an inverse-CDF
table, so one uniform gives one draw and the Numba kernel and the NumPy
reference compute the same bits.  Schedules:

===============  ====================================================================
``iid``          one law for every t (Assumption iid (a))
``markov``       regime switching: at each t, with probability p, the regime is redrawn
``blocks``       piecewise-constant: the laws alternate in blocks of fixed length
``drift``        smooth drift: Beta law with mean 0.5 + A sin(2 pi t / P), 64 phase bins
``adversarial``  point masses: G = g1 for the first half of the run, g2 after
===============  ====================================================================

SPEC strings (``python -m sims reduced --G SPEC``)::

    uniform | beta:a,b | mixture:w:a:b,w:a:b[,...] | file:PATH.npy
    regime:p,a1,b1,a2,b2 | blocks:L,a1,b1,a2,b2 | drift:P,A | adversarial:g1,g2

Beta laws are tabulated at 16385 quantiles and linearly interpolated (the CDF
error of the table is below 1e-4 in the worst tail, far below it elsewhere);
``file:`` resamples the array uniformly (a step table).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sims.core import defaults

#: The G_t schedules, by name: their kernel codes (``GProcess.kind``).
KINDS = {"iid": 0, "markov": 1, "blocks": 2, "drift": 3, "adversarial": 4}
#: The grammar of a G_t process specification (:func:`parse`), as the CLI's help shows it.
SPEC_HELP = (
    "uniform | beta:a,b | mixture:w:a:b,w:a:b,... | file:PATH.npy | regime:p,a1,b1,a2,b2 | "
    "blocks:L,a1,b1,a2,b2 | drift:P,A | adversarial:g1,g2"
)
TABLE_SIZE = 16385  #: points of an inverse-CDF table (2**14 + 1: interpolated between neighbours)
DRIFT_BINS = 64  #: laws of the drift schedule: the sine's period is cut into this many phases
W_GRID_POINTS = 61  #: delta grid for W_T: the sup norm is over linspace(0, M, 61)
_W_NODES = (np.arange(256) + 0.5) / 256  # quantile nodes for the law-expected KL and DG


@dataclass(frozen=True)
class GProcess:
    """A G_t process: ``tables[law]`` are inverse-CDF tables, ``kind`` the schedule.

    ``params`` holds the schedule's numbers: markov (p,), blocks (L,), drift (P,),
    adversarial (switch time,); ``step`` marks resampling tables.

    Attributes
    ----------
    spec : str
        The specification it was parsed from (:data:`SPEC_HELP`).
    kind : str
        The schedule, a key of :data:`KINDS`.
    tables : ndarray, shape (n_laws, size)
        One inverse-CDF table per law.
    step : bool
        Tables are step functions (resampled data) rather than interpolated.
    params : ndarray
        The schedule's numbers.
    """

    spec: str
    kind: str
    tables: np.ndarray
    step: bool
    params: np.ndarray

    @property
    def kind_code(self) -> int:
        return KINDS[self.kind]

    def law_means(self) -> np.ndarray:
        """The mean of each law, :math:`E[G]` under ``tables[l]``.

        Returns
        -------
        ndarray, shape (n_laws,)
            The means.
        """
        return np.array([_law_mean(t, self.step) for t in self.tables])

    def mean(self) -> float:
        """E[G] under the schedule's long-run law frequencies.

        Returns
        -------
        float
            The mean of the law means (every schedule spends equal time in its laws in the long run).
        """
        return float(np.mean(self.law_means()))

    def max_dg(self) -> float:
        r"""Largest achievable long-run DG, :math:`E[(1-G)\,1\{G>0\}]` (delta = inf).

        A hard watermark moves all red mass to green unless the green list is empty,
        so the DG target Delta is feasible only below this value.

        Returns
        -------
        float
            The largest feasible Delta.
        """
        vals = [t if self.step else 0.5 * (t[1:] + t[:-1]) for t in self.tables]
        return float(np.mean([np.mean((1.0 - v) * (v > 0.0)) for v in vals]))

    def with_switch_time(self, T: int) -> GProcess:
        """The adversarial schedule switches at T // 2 of the run it is used for.

        Parameters
        ----------
        T : int
            Steps of the run.

        Returns
        -------
        GProcess
            ``self`` for other schedules, else a copy switching at T // 2.
        """
        if self.kind != "adversarial":
            return self
        return GProcess(self.spec, self.kind, self.tables, self.step, np.array([T // 2], dtype=np.float64))


def _law_mean(table: np.ndarray, step: bool) -> float:
    if step:
        return float(table.mean())
    return float(np.mean(0.5 * (table[1:] + table[:-1])))


def _beta_table(a: float, b: float) -> np.ndarray:
    from scipy.stats import beta

    u = np.linspace(0.0, 1.0, TABLE_SIZE)
    return np.clip(beta.ppf(u, a, b), 0.0, 1.0)


def _mixture_table(parts: list[tuple[float, float, float]]) -> np.ndarray:
    from scipy.stats import beta

    x = np.concatenate([[0.0], np.sort(np.unique(np.concatenate([beta.ppf(np.linspace(0, 1, 8 * TABLE_SIZE), a, b) for _, a, b in parts]))), [1.0]])
    x = np.unique(np.clip(x, 0.0, 1.0))
    cdf = sum(w * beta.cdf(x, a, b) for w, a, b in parts) / sum(w for w, _, _ in parts)
    cdf, idx = np.unique(cdf, return_index=True)
    return np.interp(np.linspace(0.0, 1.0, TABLE_SIZE), cdf, x[idx])


def _numbers(s: str, n: int | None, name: str) -> list[float]:
    try:
        vals = [float(v) for v in s.split(",")]
    except ValueError:
        raise ValueError(f"{name} parameters must be numbers; got {s!r}") from None
    if n is not None and len(vals) != n:
        raise ValueError(f"{name} takes {n} numbers; got {len(vals)} in {s!r}")
    return vals


def _positive(name: str, v: float) -> float:
    if not (v > 0.0 and math.isfinite(v)):
        raise ValueError(f"{name} must be in (0, inf); got {v!r}")
    return v


def _beta(a: float, b: float) -> np.ndarray:
    return _beta_table(_positive("beta a", a), _positive("beta b", b))


def parse_spec(spec: str) -> GProcess:
    """Build a :class:`GProcess` from a SPEC string (see module docstring).

    Parameters
    ----------
    spec : str
        E.g. ``"beta:2,2"`` (i.i.d. Beta(2, 2) green masses).

    Returns
    -------
    GProcess

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Assumption 2.7 (assum:iid): the green masses G_t of Theorem 2.8.

    Examples
    --------
    >>> import sims
    >>> gp = sims.g_process("beta:2,2")
    >>> type(gp).__name__, gp.spec
    ('GProcess', 'beta:2,2')
    """
    head, _, rest = spec.partition(":")
    arr = lambda *t: np.stack(t)  # noqa: E731
    if head == "uniform" and not rest:
        return GProcess(spec, "iid", arr(np.linspace(0.0, 1.0, TABLE_SIZE)), False, np.zeros(1))
    if head == "beta":
        a, b = _numbers(rest, 2, "beta")
        return GProcess(spec, "iid", arr(_beta(a, b)), False, np.zeros(1))
    if head == "mixture":
        parts = []
        for comp in rest.split(","):
            w, a, b = _numbers(comp.replace(":", ","), 3, "mixture component w:a:b")
            parts.append((_positive("mixture weight", w), _positive("beta a", a), _positive("beta b", b)))
        return GProcess(spec, "iid", arr(_mixture_table(parts)), False, np.zeros(1))
    if head == "file":
        try:
            data = np.load(rest).astype(np.float64).ravel()
        except (OSError, ValueError) as exc:
            raise ValueError(f"file:{rest} must be a readable .npy array of green masses; {exc}") from None
        if data.size == 0 or np.isnan(data).any() or (data < 0).any() or (data > 1).any():
            raise ValueError(f"file:{rest} must hold a non-empty array of green masses in [0, 1]")
        return GProcess(spec, "iid", arr(np.sort(data)), True, np.zeros(1))
    if head == "regime":
        p, a1, b1, a2, b2 = _numbers(rest, 5, "regime")
        if not (0.0 < p <= 1.0):
            raise ValueError(f"regime switch probability must be in (0, 1]; got {p!r}")
        return GProcess(spec, "markov", arr(_beta(a1, b1), _beta(a2, b2)), False, np.array([p]))
    if head == "blocks":
        L, a1, b1, a2, b2 = _numbers(rest, 5, "blocks")
        if L < 1 or L != int(L):
            raise ValueError(f"blocks length must be an integer in [1, inf); got {L!r}")
        return GProcess(spec, "blocks", arr(_beta(a1, b1), _beta(a2, b2)), False, np.array([L]))
    if head == "drift":
        P, A = _numbers(rest, 2, "drift")
        _positive("drift period", P)
        if not (0.0 <= A < 0.5):
            raise ValueError(f"drift amplitude must be in [0, 0.5); got {A!r}")
        phases = (np.arange(DRIFT_BINS) + 0.5) / DRIFT_BINS
        means = 0.5 + A * np.sin(2 * np.pi * phases)
        return GProcess(spec, "drift", np.stack([_beta_table(4 * m, 4 * (1 - m)) for m in means]), False, np.array([P]))
    if head == "adversarial":
        g1, g2 = _numbers(rest, 2, "adversarial")
        for v in (g1, g2):
            if not (0.0 <= v <= 1.0):
                raise ValueError(f"adversarial green masses must be in [0, 1]; got {v!r}")
        return GProcess(spec, "adversarial", arr(np.full(2, g1), np.full(2, g2)), False, np.array([np.inf]))
    raise ValueError(f"G spec must be one of {SPEC_HELP}; got {spec!r}")


def law_functions(proc: GProcess, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Law-expected KL and DG on a delta grid: arrays of shape (n_laws, len(grid)).

    Parameters
    ----------
    proc : GProcess
        The process.
    grid : ndarray
        Boosts delta.

    Returns
    -------
    kl, dg : ndarray, shape (n_laws, len(grid))
        :math:`E[D_{kl}(\delta, G)]` and :math:`E[\mathrm{DG}(\delta, G)]` under each law (256 mid-quantile nodes).
    """
    import theory

    kl = np.empty((len(proc.tables), grid.size))
    dg = np.empty_like(kl)
    for l, table in enumerate(proc.tables):
        g = np.array([draw_from_table(table, proc.step, u) for u in _W_NODES])
        kl[l] = theory.kl_step(grid[:, None], g[None, :]).mean(axis=1)
        dg[l] = theory.dg_step(grid[:, None], g[None, :]).mean(axis=1)
    return kl, dg


def nonstationarity(proc: GProcess, law_counts: np.ndarray, M: float = defaults.M) -> tuple[float, float]:
    r"""W_{T,1}, W_{T,2} (paper, after Theorem dualGA_performance_iid).

    .. math:: W_{T,1} = \sum_t \| \bar D_{kl,t} - \bar D_{kl} \|_\infty,\quad
              W_{T,2} = \sum_t \| \overline{\mathrm{DG}}_t - \overline{\mathrm{DG}} \|_\infty

    where :math:`\bar D_{kl,t}(\delta) = E[D_{kl}(\delta, G_t)]` under the law in
    force at t and the bar without t is their time average; the sup norm is over
    the grid ``linspace(0, M, 61)`` of boosts (the range of DualGA's projected
    lambda_t), and the law expectations use 256 mid-quantile nodes of each law.
    ``law_counts[l]`` is the number of steps spent under law l (for the Markov
    schedule: the realised regimes, averaged over replications).  An i.i.d.
    process has W = 0.

    Parameters
    ----------
    proc : GProcess
        The process.
    law_counts : array_like, shape (n_laws,)
        Steps spent under each law.
    M : float, default defaults.M
        Upper end of the boost grid.

    Returns
    -------
    W1, W2 : float
        :math:`W_{T,1}` and :math:`W_{T,2}`.
    """
    if len(proc.tables) == 1:
        return 0.0, 0.0
    kl, dg = law_functions(proc, np.linspace(0.0, M, W_GRID_POINTS))
    w = np.asarray(law_counts, dtype=np.float64)
    T = w.sum()
    out = []
    for f in (kl, dg):
        mean_f = (w[:, None] * f).sum(axis=0) / T
        out.append(float(np.sum(w * np.max(np.abs(f - mean_f), axis=1))))
    return out[0], out[1]


def draw_from_table(table: np.ndarray, step: bool, u: float) -> float:
    """Inverse-CDF draw; the same arithmetic as the kernel's ``_draw``.

    Parameters
    ----------
    table : ndarray
        An inverse-CDF table.
    step : bool
        Read it as a step function (else interpolate linearly).
    u : float
        A uniform in (0, 1).

    Returns
    -------
    float
        The draw of G.
    """
    n = table.shape[0]
    if step:
        return float(table[min(int(u * n), n - 1)])
    x = u * (n - 1)
    i = min(int(x), n - 2)
    w = x - i
    return float(table[i] + w * (table[i + 1] - table[i]))
