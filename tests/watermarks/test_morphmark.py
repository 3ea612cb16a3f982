"""MorphMark (Wang et al. 2025): the rule against hand computations, its green mass, and its detector's null.

Every expected value is computed here from the paper's rule written out afresh: q on the green list is
p scaled by q_G / G, on the red list by (1 - q_G) / (1 - G), with q_G = G + r (1 - G) and
r = min(exp(kappa G) - 1, 1) where G >= p0 (0 below); KL summed token by token; binomial tails as
exact rationals.  The Numba step is also checked against the reference step at every step of every
text by the registry battery (tests/watermarks/test_registry_battery.py).
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from sims.core import defaults, prf, windows
from sims.detect.families import detectors
from sims.lm.synthetic import open_synthetic
from sims.watermarks import morphmark, registry
from sims.watermarks.generate import generate_synthetic

KEY = 77
KAPPA, P0 = defaults.MORPH_KAPPA, defaults.MORPH_P0
CONF = 1e-4  # two-sided level of the Monte Carlo checks (fixed seeds: a failure is a bug at this level)
Z = stats.norm.isf(CONF / 2)


def _hand_r(G, kappa=KAPPA, p0=P0):
    return 0.0 if G < p0 else min(math.exp(kappa * G) - 1.0, 1.0)


def _hand_q(p, green, kappa=KAPPA, p0=P0, G=None):
    """q by the rule: the green list scaled to mass q_G = G + r (1 - G), the red list to 1 - q_G (``G``: the green
    mass as the code under test summed it, where a last-bit difference would move it across p0)."""
    G = float(p[green].sum()) if G is None else G
    r = _hand_r(G, kappa, p0)
    qG = G + r * (1.0 - G)
    return np.where(green, p * qG / G, p * (1.0 - qG) / (1.0 - G)), G, r


def _kl(q, p):
    return sum(float(a * math.log(a / b)) for a, b in zip(q, p) if a > 0)


def test_the_strength_and_records_by_hand():
    """G = 0.5: r = e^0.65 - 1 = 0.915540829; the cap r = 1 from G = ln 2 / 1.3 = 0.5332 on; none below p0; at p0 exactly, on."""
    assert morphmark.strength(0.5, KAPPA, P0) == pytest.approx(0.915540829013896, rel=1e-14)
    assert morphmark.strength(0.75, KAPPA, P0) == 1.0 and morphmark.strength(0.534, KAPPA, P0) == 1.0
    assert morphmark.strength(0.532, KAPPA, P0) == pytest.approx(math.exp(1.3 * 0.532) - 1.0, rel=1e-14)
    assert math.exp(1.3 * 0.532) - 1.0 < 1.0  # just below the cap
    assert morphmark.strength(P0, KAPPA, P0) == pytest.approx(math.exp(1.3 * 0.15) - 1.0, rel=1e-14)  # at p0: watermarked
    assert morphmark.strength(np.nextafter(P0, 0.0), KAPPA, P0) == 0.0 and morphmark.strength(0.0, KAPPA, 0.0) == 0.0
    # records(r, G) = (q_G, KL, DG) against q built token by token: p = (0.1, 0.2, 0.3, 0.4), green = {0, 3}, G = 0.5
    p = np.array([0.1, 0.2, 0.3, 0.4])
    green = np.array([True, False, False, True])
    for p0, kappa in ((P0, KAPPA), (0.6, KAPPA), (P0, 2.0)):  # watermarked; below p0; capped (e^1 - 1 > 1)
        q, G, r = _hand_q(p, green, kappa, p0)
        qG, kl, dg = morphmark.records(morphmark.strength(G, kappa, p0), G)
        assert qG == pytest.approx(q[green].sum(), rel=1e-14) and dg == pytest.approx(q[green].sum() - G, rel=1e-13, abs=1e-16)
        assert kl == pytest.approx(_kl(q, p), rel=1e-13, abs=1e-16)
    assert morphmark.records(1.0, 0.5) == (1.0, pytest.approx(math.log(2.0), rel=1e-15), 0.5)  # the hard list: KL = -log G
    assert morphmark.records(0.3, 1.0) == (1.0, 0.0, 0.0)  # nothing red to move


def _reference_cases(V=64):
    """(p, green, window) with G at 0.1 (below p0), at p0 exactly, 0.4 (r < 1) and 0.8 (the cap): p uniform
    within each colour of the key's green list after ``window`` (gamma 0.5)."""
    out = []
    for j, G in enumerate((0.1, None, 0.4, 0.8)):
        window = np.array([j + 1])
        green = prf.green_mask(prf.context_hash(KEY, window), V, defaults.MORPH_GAMMA)
        ng = int(green.sum())
        p = np.where(green, (0.3 if G is None else G) / ng, (1.0 - (0.3 if G is None else G)) / (V - ng))
        out.append((p, green, window))
    return out


def test_the_reference_step_by_hand():
    """The registry's reference step equals q built by hand, at G below p0, at p0 exactly (the threshold set to
    the computed G: watermarked), with r < 1 and at the cap (q = p on the green list only)."""
    ref = registry.get("morphmark").reference
    for j, (p, green, window) in enumerate(_reference_cases()):
        G = float(p[green].sum())
        p0 = G if j == 1 else P0
        prm = registry.resolve_params("morphmark", morph_p0=p0)
        q, states = ref(p, window, 0, KEY, (0.0, False), prm)
        hand, _, r = _hand_q(p, green, p0=p0)
        np.testing.assert_allclose(q, hand, rtol=1e-13, atol=0)
        assert (r == 0.0) == (j == 0) and (r == 1.0) == (j == 3) and len(states) == p.size
        if j == 0:
            np.testing.assert_array_equal(q, p)
        if j == 3:
            assert not q[~green].any()
        if j == 1:
            q_off, _ = ref(p, window, 0, KEY, (0.0, False), registry.resolve_params("morphmark", morph_p0=np.nextafter(G, 1.0)))
            np.testing.assert_array_equal(q_off, p)


def test_the_torch_processor_by_hand():
    """MorphMarkProcessor on the four cases as one batch: its output distribution is q by hand, its records
    KL, DG and G those of q, lambda nan; with p0 at the second row's G exactly (watermarked) and just above it (not)."""
    torch = pytest.importorskip("torch")
    from sims.torch_backend.processors import make_processor

    cases = _reference_cases()
    V = cases[0][0].size
    ids = torch.tensor([[5, int(w[0])] for _, _, w in cases])
    scores = torch.log(torch.tensor(np.stack([p for p, _, _ in cases]))).float()
    p_in = torch.softmax(scores.double(), -1)  # the processor's p_t (float32 logits)
    greens = torch.tensor(np.stack([g for _, g, _ in cases]))
    G1 = float((p_in * greens).sum(-1).clamp(0.0, 1.0)[1])  # row 1's G as the processor sums it
    p_in = p_in.numpy()
    for p0 in (G1, float(np.nextafter(G1, 1.0))):
        proc = make_processor("morphmark", vocab_size=V, key=KEY, morph_p0=p0)
        out = torch.softmax(proc(ids, scores).double(), -1).numpy()
        rec = proc.stacked()
        for i, (_, green, _) in enumerate(cases):
            G = float(rec["G"][i, 0])
            assert G == pytest.approx(p_in[i][green].sum(), rel=1e-13)
            hand, _, r = _hand_q(p_in[i], green, p0=p0, G=G)
            np.testing.assert_allclose(out[i], hand, rtol=0, atol=2e-6)
            assert float(rec["dg"][i, 0]) == pytest.approx(hand[green].sum() - G, rel=1e-12, abs=1e-15)
            assert float(rec["kl"][i, 0]) == pytest.approx(_kl(hand, p_in[i]), rel=1e-12, abs=1e-15)
            assert math.isnan(float(rec["lam"][i, 0]))
            assert (r == 0.0) == (i == 0 or (i == 1 and p0 > G1)) and (r == 1.0) == (i == 3)
            if r == 1.0:
                assert torch.isinf(proc(ids, scores)[i][torch.from_numpy(~green)]).all()  # red logits -inf


@pytest.fixture(scope="module")
def news():
    return open_synthetic("news")


@pytest.fixture(scope="module")
def gen(news):
    """200 texts x 100 tokens on the news preset (V = 32000), seed 5, the defaults (gamma 0.5, kappa 1.3, p0 0.15)."""
    return generate_synthetic(news, "morphmark", n=200, T=100, seed=5, key=KEY)


def test_the_generators_records_follow_the_rule(gen):
    """Every step's DG is r(G)(1 - G) of its own G, and the steps cover all three regimes of r."""
    G = gen.G
    r = np.where(G >= P0, np.minimum(np.exp(KAPPA * G) - 1.0, 1.0), 0.0)
    np.testing.assert_allclose(gen.dg, r * (1.0 - G), rtol=1e-12, atol=1e-15)
    assert (r == 0).sum() > 100 and ((r > 0) & (r < 1)).sum() > 100 and (r == 1).sum() > 100
    assert np.isnan(gen.lam).all() and gen.meta["gamma"] == 0.5 and gen.meta["morph_kappa"] == KAPPA and gen.meta["morph_p0"] == P0
    assert "dip_alpha" not in gen.meta and "morph_kappa" not in generate_synthetic(open_synthetic("tiny"), "srl", n=1, T=2, seed=0, key=1).meta


def test_the_green_rate_is_the_papers_green_mass(gen):
    """The emitted tokens are green with probability q_G = G + r(1 - G) at each step: over the 20,000 steps,
    sum(green_t - q_G,t) / sqrt(sum q_G,t (1 - q_G,t)) lies within the normal quantile at level 1e-4 (a martingale
    CLT; seed 5), while the unwatermarked rate G would be far off."""
    w = windows.windows(gen.tokens, gen.prompts, gen.meta["h"])
    green = prf.is_green(prf.context_hash(KEY, w), gen.tokens, gen.meta["gamma"])
    qG = gen.G + gen.dg
    sd = math.sqrt(float(np.sum(qG * (1.0 - qG))))
    assert abs(float(np.sum(green - qG))) < Z * sd
    assert float(np.sum(green - gen.G)) > 20 * Z * sd  # the test can tell: DG is far from 0


@pytest.mark.parametrize("keying", [dict(prf="siphash", key=bytes(range(16))), dict(seeding="selfhash", key=KEY, h=2)])
def test_siphash_and_seeding_schemes_key_the_same_rule(news, keying):
    """The record's siphash flag: SipHash-keyed and self-hash-seeded green lists (40 texts x 100 tokens, seed 3) follow
    the rule (DG = r(G)(1 - G) at every step) and their detector, keyed the same way, finds every text at 1e-4."""
    g = generate_synthetic(news, "morphmark", n=40, T=100, seed=3, **keying)
    r = np.where(g.G >= P0, np.minimum(np.exp(KAPPA * g.G) - 1.0, 1.0), 0.0)
    np.testing.assert_allclose(g.dg, r * (1.0 - g.G), rtol=1e-12, atol=1e-15)
    assert (detectors.score(g, news).log10_p < -4).all()


def test_detection_is_the_exact_binomial_tail(gen, news):
    """The red-green family scores MorphMark's texts: green count of the generated tokens and log10 p equal to the
    exact rational tail P(Bin(n, g) >= k), g the Bernoulli rate rounded to 2**-53, in log space (rel 1e-9)."""
    res = detectors.score(gen, news)
    w = windows.windows(gen.tokens, gen.prompts, gen.meta["h"])
    green = prf.is_green(prf.context_hash(KEY, w), gen.tokens, 0.5)
    g = Fraction(prf.green_threshold(0.5), prf.TOP53)
    for i in range(5):
        k, n = int(green[i].sum()), gen.tokens.shape[1]
        assert res.score[i] == k and res.n_scored[i] == n
        tail = sum((Fraction(math.comb(n, j)) * g**j * (1 - g) ** (n - j) for j in range(k, n + 1)), Fraction(0))
        assert res.log10_p[i] * math.log(10) == pytest.approx(math.log(tail.numerator) - math.log(tail.denominator), rel=1e-9)
    assert np.median(res.log10_p) < -4  # and it is detected


def test_the_null_rate_at_1e_2_to_1e_4_in_log_space(news):
    """Unwatermarked news texts (5,000 x 50 tokens, seed 9) scored by MorphMark's detector (gamma 0.5, dedup):
    the share with log10 p <= log10(alpha) is at most the upper end of the Binomial(5,000, alpha) interval at level
    1e-4, for alpha = 1e-2, 1e-3, 1e-4 (a valid p-value).  The check has power: the same green counts given the
    binomial tail of a mis-stated null rate 0.45 exceed the bound at 1e-2."""
    plain = generate_synthetic(news, "none", n=5000, T=50, seed=9, key=KEY, gamma=defaults.MORPH_GAMMA)
    res = detectors.score(plain, news, algo="morphmark", dedup=True)
    bound = {alpha: stats.binom.isf(CONF / 2, res.log10_p.size, alpha) for alpha in (1e-2, 1e-3, 1e-4)}
    for alpha, b in bound.items():
        assert np.sum(res.log10_p <= math.log10(alpha)) <= b, alpha
    misstated = stats.binom.logsf(res.score - 1, res.n_scored, 0.45) / math.log(10)
    assert np.sum(misstated <= -2) > bound[1e-2]


def test_parameters_are_checked_and_reach_the_cli(tmp_path, capsys):
    from sims.cli.main import main
    from sims.core.record import Generation

    lm = open_synthetic("tiny")
    for name, bad, rng in (("morph_kappa", 0.0, r"\(0, inf\)"), ("morph_p0", 1.5, r"\[0, 1\]")):
        with pytest.raises(ValueError, match=f"^{name} must be in {rng}; got {bad}"):
            generate_synthetic(lm, "morphmark", n=1, T=2, seed=0, key=1, **{name: bad})
    with pytest.raises(ValueError, match="algo 'srl' takes no parameter 'morph_p0'"):
        generate_synthetic(lm, "srl", n=1, T=2, seed=0, key=1, morph_p0=0.2)
    out = tmp_path / "m.npz"
    assert main(["generate", "--lm", "tiny", "--algo", "morphmark", "--morph_kappa", "2.0", "--morph_p0", "0.3", "--n", "2", "--T", "20",
                 "--out", str(out)]) == 0
    meta = Generation.load(out).meta
    assert meta["morph_kappa"] == 2.0 and meta["morph_p0"] == 0.3 and meta["gamma"] == 0.5
    capsys.readouterr()
    assert main(["detect", str(out), "--key", str(defaults.KEY), "--json"]) == 0
    assert '"algo": "morphmark"' in capsys.readouterr().out
