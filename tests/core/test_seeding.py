"""Seeding schemes (:mod:`sims.core.seeding`): NumPy reference, Numba kernels and torch bit-identical;
the generator's exact records under each scheme equal the registry's reference steps; detection
recomputes the same green lists and counts each (seed, token) pair once."""

from __future__ import annotations

import numpy as np
import pytest

import theory
from proofs_check import _exact
from sims.core import prf, seeding
from sims.core.record import Generation
from sims.detect.families import detectors
from sims.detect.stats import scores
from sims.lm.synthetic import open_synthetic
from sims.watermarks import registry
from sims.watermarks.generate import generate_synthetic

SCHEMES = seeding.SEEDINGS
KEY = 0xDEADBEEF12345


def _numba_words(key, windows, tokens, scheme):
    h = windows.shape[1]
    wa = np.empty(h, dtype=np.uint64)
    return np.array([prf._mix64(np.uint64(seeding.pair_nb(np.uint64(key), windows[i], tokens[i], seeding.code(scheme), wa, seeding.NO_CLUSTERS)))
                     for i in range(len(tokens))], dtype=np.uint64)


@pytest.mark.parametrize("h", [1, 2, 4])
@pytest.mark.parametrize("scheme", SCHEMES)
def test_numba_words_equal_the_reference(scheme, h):
    """200 random (window, token) pairs (seed 0, ids up to 2**31): the Numba pair word equals NumPy's."""
    rng = np.random.default_rng(0)
    windows = rng.integers(0, 2**31, size=(200, h))
    tokens = rng.integers(0, 2**31, size=200)
    np.testing.assert_array_equal(_numba_words(KEY, windows, tokens, scheme), seeding.words(KEY, windows, tokens, scheme))


def test_schemes_by_definition():
    """h = 1: minhash and skipgram are lefthash; skipgram reads only the oldest token; minhash is a set
    function of the window; selfhash's green list differs from lefthash's."""
    rng = np.random.default_rng(1)
    w1 = rng.integers(0, 5000, size=(50, 1))
    for s in ("minhash", "skipgram"):
        np.testing.assert_array_equal(seeding.seeds(KEY, w1, s), seeding.seeds(KEY, w1, "lefthash"))
    w = rng.integers(0, 5000, size=(50, 3))
    moved = w.copy()
    moved[:, 1:] = rng.integers(0, 5000, size=(50, 2))
    np.testing.assert_array_equal(seeding.seeds(KEY, moved, "skipgram"), seeding.seeds(KEY, w, "skipgram"))
    np.testing.assert_array_equal(seeding.seeds(KEY, w[:, ::-1], "minhash"), seeding.seeds(KEY, w, "minhash"))
    assert (seeding.seeds(KEY, w[:, ::-1], "lefthash") != seeding.seeds(KEY, w, "lefthash")).all()
    a = seeding.token_hashes(KEY, w)
    np.testing.assert_array_equal(seeding.seeds(KEY, w, "minhash"), a.min(axis=1))
    g_self = seeding.green_mask(KEY, w[:3], 3000, 0.25, "selfhash")
    g_left = seeding.green_mask(KEY, w[:3], 3000, 0.25, "lefthash")
    assert (g_self != g_left).mean() > 0.2 and abs(g_self.mean() - 0.25) < 0.02  # 9000 Bernoulli(0.25): sd 0.0046


def test_semantic_by_definition():
    """``semantic`` recomputed here from its definition with Python integers (cluster centroids summed over the window, the
    signs of its projections on the keyed hyperplanes, the seed a(pattern)); a synonym (same cluster) anywhere in the window
    keeps the seed, the window's order does not matter (a bag of embeddings), and a token of another cluster moves the pattern
    in most windows (200 windows of 4, seed 2)."""
    M = (1 << 64) - 1

    def mix(z):
        z &= M
        z = ((z ^ (z >> 30)) * prf.M1) & M
        z = ((z ^ (z >> 27)) * prf.M2) & M
        return z ^ (z >> 31)

    def byte(w):
        return (w >> 56) - 128

    def pattern(key, window):
        e = [0] * seeding.DIM
        for tok in window:
            c = mix(tok * prf.C_CONTEXT + seeding.C_CLUSTER) % seeding.CLUSTERS
            for j in range(seeding.DIM):
                e[j] += byte(mix(c * seeding.DIM + j + seeding.C_CENTROID))
        base = mix(key + prf.GOLDEN)
        bits = 0
        for i in range(seeding.BITS):
            if sum(e[j] * byte(mix(base ^ ((i * seeding.DIM + j + seeding.C_PLANE) & M))) for j in range(seeding.DIM)) >= 0:
                bits |= 1 << i
        return bits

    rng = np.random.default_rng(2)
    w = rng.integers(0, 50_000, size=(200, 4))
    want = [pattern(KEY, [int(t) for t in row]) for row in w[:20]]
    np.testing.assert_array_equal(seeding.semantic_bits(KEY, w[:20]), np.array(want, dtype=np.uint64))
    np.testing.assert_array_equal(seeding.seeds(KEY, w, "semantic"), seeding.token_hashes(KEY, seeding.semantic_bits(KEY, w).astype(np.int64)))
    cl = seeding.clusters(np.arange(50_000))
    syn = w.copy()
    for i in range(len(w)):
        syn[i, i % 4] = rng.choice(np.flatnonzero((cl == cl[w[i, i % 4]]) & (np.arange(50_000) != w[i, i % 4])))
    np.testing.assert_array_equal(seeding.seeds(KEY, syn, "semantic"), seeding.seeds(KEY, w, "semantic"))
    np.testing.assert_array_equal(seeding.seeds(KEY, w[:, ::-1], "semantic"), seeding.seeds(KEY, w, "semantic"))
    other = w.copy()
    other[:, 0] = [rng.choice(np.flatnonzero(cl != cl[t])) for t in w[:, 0]]
    assert (seeding.seeds(KEY, other, "semantic") != seeding.seeds(KEY, w, "semantic")).mean() > 0.5
    assert np.bincount(cl, minlength=seeding.CLUSTERS).min() > 0.5 * 50_000 / seeding.CLUSTERS  # every cluster well populated


@pytest.mark.parametrize("scheme", SCHEMES)
def test_vocabulary_green_lists_numba_equal_reference(scheme):
    """The generator's whole-vocabulary green list (V = 3000, h = 3) equals the reference's and the per-token word's."""
    V, h, gamma = 3000, 3, 0.3
    window = np.array([17, 2999, 4], dtype=np.int64)
    thr = prf.green_threshold(gamma)
    ref = seeding.green_mask(KEY, window, V, gamma, scheme)
    green = np.empty(V)
    if scheme == "selfhash":
        wa = np.empty(h, dtype=np.uint64)
        seeding.window_hashes_into(np.uint64(KEY), window, wa)
        seeding.self_green_into(wa, seeding.token_hashes(KEY, np.arange(V)), prf.token_mix(V), thr, green)
    else:
        s = seeding.seed_hash_nb(np.uint64(KEY), window, seeding.code(scheme), seeding.NO_CLUSTERS)
        green = prf.is_green(s, np.arange(V), gamma)
    np.testing.assert_array_equal(green > 0.5, ref)
    w = _numba_words(KEY, np.repeat(window[None], V, 0), np.arange(V), scheme)
    np.testing.assert_array_equal((w >> np.uint64(11)) < np.uint64(thr), ref)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_torch_bit_identical(scheme):
    """torch's green lists (B = 4 windows, h = 3, V = 1500) and per-token colours equal NumPy's."""
    torch = pytest.importorskip("torch")
    from sims.torch_backend import seeding_torch

    rng = np.random.default_rng(2)
    V, gamma = 1500, 0.25
    windows = rng.integers(0, V, size=(4, 3))
    ref = seeding.green_mask(KEY, windows, V, gamma, scheme)
    got = seeding_torch.green_mask(KEY, torch.as_tensor(windows), V, gamma, scheme).numpy()
    np.testing.assert_array_equal(got, ref)
    y = rng.integers(0, V, size=4)
    col = seeding_torch.is_green(KEY, torch.as_tensor(windows), torch.as_tensor(y), gamma, scheme).numpy()
    np.testing.assert_array_equal(col, ref[np.arange(4), y])


ALGOS = ("srl", "hard", "dualga", "autocov")


@pytest.mark.parametrize("scheme", ("selfhash", "minhash", "skipgram"))
@pytest.mark.parametrize("algo", ALGOS)
def test_generator_records_equal_reference_steps(algo, scheme):
    """lfqa LM at V = 2000, 2 texts x 12 tokens, h = 3, seed 3: each step's G, entropy, KL(q||p), DG and
    lambda equal the registry's reference step under the same scheme (exact p_t), q_t(y) > 0."""
    lm = open_synthetic("lfqa", vocab_size=2000)
    h, T, key = 3, 12, 99
    gen = generate_synthetic(lm, algo, n=2, T=T, seed=3, key=key, h=h, seeding=scheme)
    prm, P = gen.meta, gen.prompts.shape[1]
    assert prm["seeding"] == scheme
    for i in range(2):
        seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
        state = _exact.initial_state(prm)
        for t in range(T):
            p, window = lm.probs(seq[: P + t]), seq[P + t - h : P + t]
            q, states = registry.get(algo).reference(p, window, t, key, state, prm)
            green = seeding.green_mask(key, window, p.shape[0], prm["gamma"], scheme)
            y, G = seq[P + t], p[green].sum()
            assert q[y] > 0.0
            assert gen.G[i, t] == pytest.approx(G, rel=1e-12, abs=1e-15)
            assert gen.entropy[i, t] == pytest.approx(theory.entropy(p), rel=1e-10)
            assert gen.kl[i, t] == pytest.approx(_exact.kl_vec(q, p), rel=1e-9, abs=1e-14)
            assert gen.dg[i, t] == pytest.approx(q[green].sum() - G, rel=1e-9, abs=1e-12)
            if "lam1" in registry.get(algo).params:
                assert gen.lam[i, t] == pytest.approx(state[0], rel=1e-12)
            state = states[y]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_detection_kernel_equals_reference_and_flags(scheme):
    """news-like lfqa LM V = 2000, SRL delta 3, h = 3, 4 x 60 tokens (seed 5): per-token colours and dedup
    marks of the kernel equal the reference's; the key flags every text at p < 1e-4, key + 1 none at p < 1e-3."""
    lm = open_synthetic("lfqa", vocab_size=2000)
    gen = generate_synthetic(lm, "srl", n=4, T=60, seed=5, key=11, h=3, delta=3.0, seeding=scheme)
    kw = dict(gamma=gen.meta["gamma"], h=3, vocab_size=2000, seeding=scheme)
    prompts = gen.prompts[:, -3:]
    for dedup in (False, True):
        got = scores.token_scores(gen.tokens, prompts, 11, dedup=dedup, **kw)
        ref = scores.token_scores_reference(gen.tokens, prompts, 11, dedup=dedup, **kw)
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[1], ref[1])
    assert (detectors.score(gen, dedup=True).log10_p < -4).all()
    assert (detectors.score(gen, dedup=True, key=12).log10_p > -3).all()


def test_dedup_counts_each_seed_token_pair_once():
    """minhash at h = 2 maps windows (a, b) and (b, a) to one seed: a text repeating y after both scores
    y once with dedup, twice without."""
    tokens = np.array([[7, 3, 9, 3, 7, 9]])  # windows before the 9s: (7, 3) and (3, 7)
    prompts = np.array([[1, 2]])
    kw = dict(gamma=0.5, h=2, vocab_size=20)
    _, sc = scores.token_scores(tokens, prompts, 5, dedup=True, seeding="minhash", **kw)
    assert sc[0].tolist() == [True, True, True, True, True, False]
    _, sc = scores.token_scores(tokens, prompts, 5, dedup=True, seeding="lefthash", **kw)
    assert sc[0].all()


def test_dedup_null_is_binomial_under_minhash():
    """Key-independent text (uniform ids over V = 40, 300 texts x 100 tokens, seed 0, h = 3, text i scored
    with key i, so texts are independent) under minhash: with dedup the green count over the distinct
    pairs is Binomial(n, 0.25): |z| < 3.9 (two-sided 1e-4)."""
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 40, size=(300, 100))
    prompts = rng.integers(0, 40, size=(300, 3))
    n = k = 0
    for i in range(300):
        r = scores.score_redgreen(tokens[i : i + 1], prompts[i : i + 1], i, 0.25, vocab_size=40, h=3, dedup=True, seeding="minhash")
        n, k = n + r.n_scored[0], k + r.score[0]
    assert n < 0.97 * 300 * 100  # merged pairs: dedup bites
    assert abs((k - 0.25 * n) / np.sqrt(n * 0.25 * 0.75)) < 3.9


@pytest.mark.parametrize("call,msg", [
    (lambda: seeding.code("selfhash4"), "seeding must be one of ('lefthash', 'selfhash', 'minhash', 'skipgram', 'semantic'); got 'selfhash4'"),
    (lambda: registry.check_seeding("ems", "minhash"), "seeding 'minhash' seeds the Bernoulli SplitMix64 green lists of"),
    (lambda: registry.check_seeding("srl", "selfhash", green_kind="partition"), "green_kind='partition'"),
    (lambda: generate_synthetic(open_synthetic("tiny"), "srl", n=1, T=2, seed=0, key=1, seeding="nohash"), "seeding must be one of"),
    (lambda: scores.token_scores(np.zeros((1, 3), dtype=np.int64), np.zeros((1, 1), dtype=np.int64), 1, stat="ems", seeding="minhash"),
     "seeding 'minhash' seeds Bernoulli SplitMix64 green lists only"),
])
def test_bad_seeding_is_one_clear_error(call, msg):
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        call()


@pytest.mark.parametrize("scheme", ("selfhash", "minhash"))
@pytest.mark.parametrize("algo", ("srl", "autocov"))
def test_torch_processor_green_lists_and_records(algo, scheme):
    """make_processor(seeding=): the processor's green lists equal the reference's (B = 3, h = 2, V = 700,
    random logits seed 4); its recorded G equals the reference green mass; its colour of a token (what AutoCov reads
    of the previous one) equals the reference's on 64 random (window, token) pairs."""
    torch = pytest.importorskip("torch")
    from sims.torch_backend.processors import make_processor

    V, h = 700, 2
    proc = make_processor(algo, vocab_size=V, key=KEY, h=h, seeding=scheme, **({"delta": 2.0} if algo == "srl" else {}))
    g = torch.Generator().manual_seed(4)
    ids = torch.randint(0, V, (3, 5), generator=g)
    for _ in range(2):
        scores_ = torch.randn(3, V, generator=g, dtype=torch.float64)
        proc(ids, scores_)
        green = seeding.green_mask(KEY, ids[:, -h:].numpy(), V, proc.gamma, scheme)
        p = torch.softmax(scores_, -1).numpy()
        np.testing.assert_allclose(proc.records["G"][-1].numpy(), (p * green).sum(-1), rtol=1e-12)
        np.testing.assert_array_equal(proc.green_lists(ids[:, -h:]).numpy(), green)
        ids = torch.cat([ids, torch.randint(0, V, (3, 1), generator=g)], 1)
    wins, ys = torch.randint(0, V, (64, h), generator=g), torch.randint(0, V, (64,), generator=g)  # the colour AutoCov reads
    ref = seeding.green_mask(KEY, wins.numpy(), V, proc.gamma, scheme)[np.arange(64), ys.numpy()]
    np.testing.assert_array_equal(proc.is_green(wins, ys).numpy(), ref)


def test_stealing_scores_the_estimate_against_the_schemes_lists():
    """generate_stealing_texts of SRL delta 4 under minhash, h = 2 (lfqa V = 64, 1500 x 16 tokens, seed 0): the attacker's
    estimate is scored against the minhash lists (accuracy > 0.6), against which the left-hash lists of the
    same key are no better than chance (accuracy within 0.5 +- 0.1); attack_point records the scheme."""
    from sims import steal

    lm = open_synthetic("lfqa", vocab_size=64)
    haul = steal.generate_stealing_texts(lm, "srl", n_max=1500, T=16, n_eval=40, h=2, delta=4.0, seeding="minhash")
    est = steal.estimate_green(haul.wm, haul.base, n_stolen=1500)
    m = haul.wm.meta
    right = steal.estimate_accuracy(est, m["key"], m["gamma"], haul.held_out, seeding="minhash")["accuracy"]
    wrong = steal.estimate_accuracy(est, m["key"], m["gamma"], haul.held_out)["accuracy"]
    assert right > 0.6 and abs(wrong - 0.5) < 0.1, (right, wrong)
    row = steal.attack_point(haul, 300)
    assert row["seeding"] == "minhash" and row["green_estimate_accuracy"] == pytest.approx(
        steal.estimate_accuracy(steal.estimate_green(haul.wm, haul.base, n_stolen=300), m["key"], m["gamma"], haul.held_out,
                                seeding="minhash")["accuracy"])


def test_cli_generate_seeding_then_detect(tmp_path, capsys):
    """``generate --seeding minhash --h 3`` keeps the scheme in the file; ``detect`` scores with it (3 texts x 60
    tokens of SRL delta 3 on lfqa: watermarked at 1e-4); an unknown scheme is one line on stderr, exit 2."""
    import json

    from sims.cli.main import main

    out = tmp_path / "g.npz"
    assert main(["generate", "--lm", "lfqa", "--algo", "srl", "--delta", "3", "--n", "3", "--T", "60", "--h", "3", "--seeding", "minhash",
                 "--out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["meta"]["seeding"] == "minhash"
    assert main(["detect", str(out), "--key", "15485863", "--dedup", "--json", "--html", str(tmp_path / "r.html")]) == 0
    rows = json.loads(capsys.readouterr().out)["texts"]
    assert all(r["watermarked"] and r["tokens_to_detect"] is not None for r in rows)  # the prefix p-values read the scheme too
    gen = Generation.load(out)
    green = scores.token_scores(gen.tokens, gen.prompts[:, -3:], 15485863, gamma=0.25, h=3, seeding="minhash")[0]
    page = (tmp_path / "r.html").read_text().split('<section class="text"', 1)[1]  # the texts, not the legend above them
    assert page.count('class="tok g"') + page.count('class="tok dup g"') == int(green.sum())  # the page colours the scheme's greens
    rc = main(["generate", "--lm", "lfqa", "--algo", "srl", "--n", "1", "--T", "5", "--seeding", "maxhash", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "seeding must be one of" in err
