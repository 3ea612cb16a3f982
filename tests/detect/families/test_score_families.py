"""Score families (issue 31): exact null tails against 50-digit mpmath, closed forms and Monte Carlo;
the Numba kernels against their NumPy twins; the CLI's --score."""

import math

import mpmath
import numpy as np
import pytest

from sims.detect.families.score_families import SCORES, score_generation
from sims.detect.stats import _score_kernels as SK
from sims.detect.stats import gumbel_scores as gs
from sims.detect.stats import lr_scores as lr
from sims.detect.stats.nulls import binom_logsf
from sims.lm.synthetic import open_synthetic
from sims.watermarks.generate import generate_synthetic

REL = 1e-9  # relative tolerance on ln p of the exact tails (float64 log-space sums)
Z_MC = 3.29  # Monte Carlo checks: a two-sided 99.9 % normal interval on a binomial count


def _mc_ok(hits: int, N: int, p: float) -> bool:
    return abs(hits - N * p) <= Z_MC * math.sqrt(N * p * (1 - p)) + 1


# ------------------------------------------------------------------ boundary crossing (HC, Tr-GoF)
@pytest.mark.parametrize("n", [1, 2, 7, 40])
def test_crossing_kernel_equals_reference(n):
    rng = np.random.default_rng(n)
    for _ in range(3):
        b = np.sort(rng.random(n) ** 3 * 0.6)
        assert gs.crossing_logsf(b) == pytest.approx(SK.crossing_logp_reference(b), rel=REL, abs=1e-12)


def test_crossing_closed_forms_deep_tail():
    """One active boundary: crossing iff U_(k) <= b, a binomial tail (itself exact to 1e-6000);
    a flat boundary: 1 - (1 - b)^n, here ~1e-98."""
    mpmath.mp.dps = 50
    n = 60
    b = np.zeros(n)
    b[9] = 1e-12
    assert gs.crossing_logsf(b) == pytest.approx(binom_logsf(10, n, 1e-12), rel=REL)
    exact = float(mpmath.log(-mpmath.expm1(n * mpmath.log1p(-mpmath.mpf("1e-100")))))
    assert gs.crossing_logsf(np.full(n, 1e-100)) == pytest.approx(exact, rel=REL)


def test_crossing_matches_50_digit_recursion():
    """The same count recursion in 50-digit mpmath with plain (non-log) binomial masses, p ~ 1e-40."""
    mpmath.mp.dps = 50
    n = 12
    b = np.array([1e-40 * (i + 1) ** 3 for i in range(n)])
    B = [mpmath.mpf(float(x)) for x in b]
    state = {0: (1 - B[0]) ** n}
    cross = 1 - (1 - B[0]) ** n
    for i in range(1, n):
        q = (B[i] - B[i - 1]) / (1 - B[i - 1])
        new = {}
        for m, pm in state.items():
            N = n - m
            for j in range(N + 1):
                t = pm * mpmath.binomial(N, j) * q**j * (1 - q) ** (N - j)
                if m + j <= i:
                    new[m + j] = new.get(m + j, 0) + t
                else:
                    cross += t
        state = new
    assert gs.crossing_logsf(b) == pytest.approx(float(mpmath.log(cross)), rel=REL)
    assert float(mpmath.log10(cross)) < -30


@pytest.mark.parametrize("kind, c", [("hc", 40.0), ("trgof", 9.0)])
def test_order_stat_tails_monte_carlo(kind, c):
    """Seed 3, 400,000 null texts of n = 16 p-values; the exact tail (~1e-3) must cover the hit
    count at 99.9 %."""
    n, N = 16, 400_000
    p = np.sort(np.random.default_rng(3).random((N, n)), axis=1)
    u = np.arange(1, n + 1) / n
    if kind == "hc":
        stat = (np.sqrt(n) * (u - p) / np.sqrt(p * (1 - p))).max(axis=1)
    else:
        stat = np.where(p < u, n * gs.k_div(u, p, gs.TRGOF_S), 0.0).max(axis=1)
    exact = math.exp(gs.order_stat_logsf(kind, c, n))
    assert 1e-4 < exact < 1e-2
    assert _mc_ok(int((stat >= c).sum()), N, exact)


def test_boundaries_invert_the_statistics():
    n, c = 30, 4.5
    for s in (1.0, 1.5, 2.0):
        b = gs.trgof_bounds(c, n, s)
        assert np.allclose(n * gs.k_div(np.arange(1, n + 1) / n, b, s), c, rtol=1e-9)
    b = gs.hc_bounds(c, n)
    assert np.allclose(gs.hc_terms(b), c, rtol=1e-9)
    # Tr-GoF with s = 2 is HC^2 / 2: the same test
    assert gs.order_stat_logsf("trgof", c * c / 2, n, 2.0) == pytest.approx(gs.order_stat_logsf("hc", c, n), rel=1e-7)


# ------------------------------------------------------------------ sums of pivots
def test_log_gamma_cdf_50_digits():
    mpmath.mp.dps = 50
    for x, n in [(0.5, 10), (3.0, 200), (150.0, 200), (1e-3, 50), (400.0, 200)]:
        exact = float(mpmath.log(mpmath.gammainc(n, 0, x, regularized=True)))
        assert gs.log_gamma_cdf(x, n) == pytest.approx(exact, rel=REL)


def test_iid_lattice_tail_50_digit_convolution():
    """30-fold convolution of a 17-cell law in 50-digit mpmath, tails from 0.8 down to 1e-120."""
    mpmath.mp.dps = 50
    pmf = np.random.default_rng(1).random(17)
    pmf[0] *= 1e-3
    pmf /= pmf.sum()
    n, J = 30, 16
    dist = [mpmath.mpf(1)]
    for _ in range(n):
        new = [mpmath.mpf(0)] * (len(dist) + J)
        for a, da in enumerate(dist):
            for j, pj in enumerate(pmf):
                new[a + j] += da * mpmath.mpf(float(pj))
        dist = new
    for x in (200, 300, 400, 470, 479, 480):
        assert gs.iid_lattice_logsf(x, n, pmf) == pytest.approx(float(mpmath.log(mpmath.fsum(dist[x:]))), rel=1e-10)
    assert gs.iid_lattice_logsf(481, n, pmf) == -math.inf


@pytest.mark.parametrize("Delta", [0.1, 0.3, 0.5, 0.7])
def test_opt_lattice_cells_exact(Delta):
    """Cell masses are differences of the exact inverse of h_Delta (checked by 50-digit bisection) and sum to 1."""
    mpmath.mp.dps = 50
    eps, kmin, pmf = gs.opt_lattice(Delta)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-14) and (pmf >= 0).all()
    m, rho = gs.opt_class(Delta)

    def h(ly):
        a = mpmath.log(m) + mpmath.mpf(Delta) / (1 - mpmath.mpf(Delta)) * ly
        return a if rho == 0 else mpmath.log(mpmath.exp(a) + mpmath.exp((1 / mpmath.mpf(rho) - 1) * ly))

    j = pmf.size // 2
    lo, hi = mpmath.mpf(-800), mpmath.mpf(0)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if h(mid) < (kmin + j + 1) * eps else (lo, mid)
    assert np.cumsum(pmf)[j] == pytest.approx(float(mpmath.exp(lo)), rel=1e-12)


def test_h_opt_at_half_is_h_log():
    ly = np.log(np.linspace(0.01, 1, 7))
    assert np.allclose(gs.h_opt_log(ly, 0.5), math.log(2) + ly)


@pytest.mark.parametrize("name", ["ems-log", "ems-opt"])
def test_sum_score_null_monte_carlo(name):
    """Seed 5, 200,000 null texts of n = 20 uniform pivots: the exact tail at the empirical
    0.999 quantile covers the hit count at 99.9 %."""
    n, N = 20, 200_000
    v = -np.log1p(-np.random.default_rng(5).random((N, n)))
    if name == "ems-log":
        S = gs.log_pivot(v).sum(axis=1)
        c = np.quantile(S, 0.999)
        exact = math.exp(gs.log_gamma_cdf(-c, n))
    else:
        eps, kmin, pmf = gs.opt_lattice(gs.OPT_DELTA)
        k = gs.opt_cells(gs.log_pivot(v), gs.OPT_DELTA).sum(axis=1)
        c = int(np.quantile(k, 0.999))
        S = k
        exact = math.exp(gs.iid_lattice_logsf(c - n * kmin, n, pmf))
    assert _mc_ok(int((S >= c).sum()), N, exact)


# ------------------------------------------------------------------ likelihood-ratio score
def test_weighted_bernoulli_tail_50_digits():
    """Exact law of sum k_t X_t (40 random weights) by 50-digit polynomial products, tails to ~1e-24."""
    mpmath.mp.dps = 50
    k = np.random.default_rng(2).integers(0, lr.LR_LEVELS + 1, size=40)
    g = mpmath.mpf(1) / 4
    dist = [mpmath.mpf(1)]
    for kt in k:
        new = [d * (1 - g) for d in dist] + [mpmath.mpf(0)] * int(kt)
        for x, d in enumerate(dist):
            new[x + int(kt)] += d * g
        dist = new
    total = int(k.sum())
    for s in (total // 4, total // 2, int(0.8 * total), total - 3, total):
        exact = float(mpmath.log(mpmath.fsum(dist[s:])))
        assert lr.weighted_bernoulli_logsf(k, s, 0.25) == pytest.approx(exact, rel=REL)
    assert lr.weighted_bernoulli_logsf(np.ones(100, dtype=np.int64), 60, 0.25) == pytest.approx(binom_logsf(60, 100, 0.25), rel=REL)


def test_tilted_tail_kernel_equals_reference():
    rng = np.random.default_rng(4)
    k = rng.integers(0, 9, size=30)
    pi = rng.random(30)
    for s in (0, 20, int(k.sum())):
        assert np.allclose(SK.tilted_tail(k, pi, s), SK.tilted_tail_reference(k, pi, s), rtol=1e-12, atol=1e-300)


def test_lr_weights():
    R = np.array([0.0, 0.2, 0.5, 0.0])
    p = np.array([1e-9, 0.3, 0.5, 1.0])
    w = lr.lr_weights(R, p, 2.0)
    assert w[0] == pytest.approx(2.0, abs=1e-8) and w[3] == pytest.approx(0.0, abs=1e-12)
    assert np.all((w >= 0) & (w <= 2.0))
    assert np.all(lr.lr_weights(R, p, math.inf) == 1.0)


@pytest.fixture(scope="module")
def news():
    return open_synthetic("news")


def test_green_masses_match_generation_records(news):
    gen = generate_synthetic(news, "srl", n=2, T=40, seed=1, key=11)
    X, G, p_y, keep = lr.lr_token_inputs(gen, news, 11, gen.meta["gamma"], 1)
    assert np.allclose(G, gen.G[1], rtol=1e-12, atol=1e-15)
    seq = np.concatenate([gen.prompts[1], gen.tokens[1]])
    probs = news.probs_along(seq, gen.prompts.shape[1], 40)
    assert np.allclose(G, SK.green_masses_reference(probs, seq, gen.prompts.shape[1], 1, 11, gen.meta["gamma"]), rtol=1e-12)


def test_lr_null_is_uniform_and_beats_the_count(news):
    """Seed 9: 200 unwatermarked texts of 30 tokens scored with an SRL detector: at levels 0.02, 0.1
    and 0.3 the share of p-values at or below the level lies in its 99.9 % binomial interval; on 12
    SRL texts the LR score has a smaller median p-value than the green count."""
    null = generate_synthetic(news, "none", n=200, T=30, seed=9, key=5, gamma=0.25)
    p = 10 ** score_generation(null, "lr", news, algo="srl", delta=2.0).log10_p
    for a in (0.02, 0.1, 0.3):
        assert _mc_ok(int(np.sum(p <= a)), p.size, a), a
    gen = generate_synthetic(news, "srl", n=12, T=100, seed=9, key=5, delta=2.0)
    assert np.median(score_generation(gen, "lr", news).log10_p) < np.median(score_generation(gen, "green").log10_p)


def test_every_family_scores_its_algorithm(news):
    gens = {a: generate_synthetic(news, a, n=2, T=60, seed=3, key=5) for a in ("srl", "ems", "its", "exp")}
    for name, fam in SCORES.items():
        gen = gens[next(a for a in gens if a in fam.algos)]
        res = score_generation(gen, name, news)
        assert np.all(res.log10_p < -2), name
        null = score_generation(gen, name, news, key=6)
        assert np.all(null.log10_p > -4), name
    with pytest.raises(ValueError, match="score .ems-opt. does not apply"):
        score_generation(gens["srl"], "ems-opt")
    with pytest.raises(ValueError, match="score must be one of"):
        score_generation(gens["srl"], "nope")


def test_cli_score(tmp_path, capsys, news):
    from sims.cli.main import main

    path = tmp_path / "e.npz"
    generate_synthetic(news, "ems", n=2, T=50, seed=1, key=7).save(path)
    assert main(["detect", str(path), "--key", "7", "--score", "ems-opt", "--json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert doc["statistic"] == "ems-opt" and all(t["watermarked"] for t in doc["texts"])
    assert main(["detect", str(path), "--key", "7", "--score", "lr"]) == 2


def test_iid_lattice_critical_is_the_smallest_rejecting_sum():
    _, _, pmf = gs.opt_lattice(0.2)
    for n, a in [(10, 1e-4), (150, 1e-6)]:
        x = gs.iid_lattice_critical(n, pmf, a)
        assert gs.iid_lattice_logsf(x, n, pmf) <= math.log(a) < gs.iid_lattice_logsf(x - 1, n, pmf)
