"""The streaming SequentialDetector under every seeding scheme and for SynthID's weighted score:
fed token by token (or in chunks) it ends in the batch detector's state (scored tokens, e-value,
stopping time); its null false-positive rate under a non-left-hash scheme is at most alpha;
combinations without an e-process are one clear error."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sims
from sims.core import seeding as seeding_mod
from sims.detect.anytime import peeking, sequential
from sims.detect.anytime.sequential_laws import sequential_tournament
from sims.detect.families import detectors
from sims.detect.families.stream import SequentialDetector
from sims.detect.stats import scores
from sims.detect.stats.tournament_scores import synthid_weights

KEY = 11
V = 600
H = 3
SCHEMES = ("selfhash", "minhash", "skipgram")


def _stream(det: SequentialDetector, tokens: np.ndarray, cuts: np.ndarray):
    """Feed ``tokens`` in the chunks ``cuts`` (increasing ends); the last state."""
    state = None
    for a, b in zip(np.r_[0, cuts], np.minimum(cuts, tokens.size)):
        if a < b:
            state = det.update(tokens[a:b])
    return state


def _assert_same(state, res, i: int, T: int) -> None:
    assert state.tokens_seen == T and state.n_scored == res.n_scored[i]
    assert state.stop == res.stop[i]
    assert state.log_e == pytest.approx(res.log_e[i], rel=1e-9, abs=1e-9)


@pytest.fixture(scope="module")
def lm():
    return sims.get_lm("lfqa", vocab_size=V)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("algo,kw", [("srl", dict(delta=2.0)), ("autocov", dict(Delta=0.2))])
def test_stream_equals_batch_on_generated_text(lm, scheme, algo, kw):
    """lfqa V = 600, h = 3, 3 x 60 tokens (seed 5) generated under the scheme, fed one token at a time
    (text 0) and in chunks of 1 to 17 (texts 1, 2): scored count, final e-value and stopping time equal
    :func:`sims.detect.families.detectors.sequential_score`'s (which reads the scheme from the generation)."""
    gen = sims.generate(lm, algo, n=3, T=60, seed=5, key=KEY, h=H, seeding=scheme, **kw)
    res = detectors.sequential_score(gen, alpha=1e-3)
    cuts = np.random.default_rng(0).integers(1, 18, size=60).cumsum()
    for i in range(3):
        det = SequentialDetector(KEY, algo=algo, context=gen.prompts[i], gamma=gen.meta["gamma"], h=H, vocab_size=V, alpha=1e-3, seeding=scheme)
        _assert_same(_stream(det, gen.tokens[i], np.arange(1, 61) if i == 0 else cuts), res, i, 60)
    if algo == "srl":
        assert (res.stop > 0).any()  # the crossing is exercised


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("algo", ("srl", "autocov"))
def test_stream_dedups_merged_seed_token_pairs_as_the_batch(scheme, algo):
    """Repetitive text (ids uniform over 6 values, h = 2, 4 x 80, seed 1) where the scheme merges windows
    into shared seeds: the stream's dedup over chunks (of 1 to 9 tokens) counts each (seed, token) pair once,
    exactly as the batch detector (n_scored far below 80); green and scored counts, e-value, stop equal."""
    rng = np.random.default_rng(1)
    toks, prompts = rng.integers(0, 6, size=(4, 80)), rng.integers(0, 6, size=(4, 2))
    batch = sequential.sequential_redgreen if algo == "srl" else sequential.sequential_autocov
    res = batch(toks, prompts, KEY, 0.25, alpha=0.05, vocab_size=6, h=2, dedup=True, seeding=scheme)
    assert res.n_scored.max() < 40  # merged pairs: dedup bites
    lefthash = batch(toks, prompts, KEY, 0.25, alpha=0.05, vocab_size=6, h=2, dedup=True)
    assert not np.array_equal(res.n_scored, lefthash.n_scored) or not np.array_equal(res.score, lefthash.score)  # the scheme matters
    cuts = rng.integers(1, 10, size=80).cumsum()
    for i in range(4):
        det = SequentialDetector(KEY, algo=algo, context=prompts[i], gamma=0.25, h=2, vocab_size=6, alpha=0.05, seeding=scheme)
        _assert_same(_stream(det, toks[i], cuts), res, i, 80)


@pytest.mark.parametrize("weights", [None, "synthid"])
def test_stream_equals_batch_for_synthid_scores(weights):
    """SynthID (news V = 600, m = 12, h = 2, 3 x 60 tokens, seed 2), mean and weighted-mean scores, fed in chunks of
    1 to 17: equal :func:`sims.detect.anytime.sequential_laws.sequential_tournament`'s state with the same weights."""
    gen = sims.generate(sims.get_lm("news", vocab_size=V), "synthid", n=3, T=60, seed=2, key=KEY, m=12, h=2)
    w = None if weights is None else synthid_weights(12)
    res = sequential_tournament(gen.tokens, gen.prompts[:, -2:], KEY, 12, alpha=1e-4, weights=w, h=2)
    cuts = np.random.default_rng(3).integers(1, 18, size=60).cumsum()
    for i in range(3):
        det = SequentialDetector(KEY, algo="synthid", context=gen.prompts[i], h=2, m=12, alpha=1e-4, weights=w)
        _assert_same(_stream(det, gen.tokens[i], cuts), res, i, 60)
    assert (res.stop > 0).all()


# Validity under minhash seeding.  Null texts: ids uniform over 50 values (key-independent text; seed 7),
# n = 2,000 texts of T = 100 tokens after 3 context tokens, h = 3; text i scored with its own key 1000 + i
# (so the texts' colours are independent); dedup on (seed, token) pairs, which minhash merges often here.
# alpha = 0.05; verdict by peeking.exceeds_level (one-sided Clopper-Pearson lower bound at 99.9 % confidence
# above alpha): a valid detector fails it with probability <= 0.1 %; the naive rule (flag at the first scored
# prefix with exact p <= alpha) must fail it.  The batch detector is run: the stream equals it exactly (above).
N_NULL, T_NULL, ALPHA = 2000, 100, 0.05


def test_minhash_detector_is_anytime_valid_and_naive_rule_fails():
    rng = np.random.default_rng(7)
    toks, prompts = rng.integers(0, 50, size=(N_NULL, T_NULL)), rng.integers(0, 50, size=(N_NULL, H))
    values = np.zeros(toks.shape)
    scored = np.zeros(toks.shape, dtype=bool)
    detected = 0
    kw = dict(vocab_size=50, h=H, dedup=True, seeding="minhash")
    for i in range(N_NULL):
        t, p = toks[i : i + 1], prompts[i : i + 1]
        values[i], scored[i] = (a[0] for a in scores.token_scores(t, p, 1000 + i, gamma=0.25, **kw))
        detected += int(sequential.sequential_redgreen(t, p, 1000 + i, 0.25, alpha=ALPHA, **kw).detected[0])
    assert scored.sum() < 0.97 * N_NULL * T_NULL  # merged (seed, token) pairs are scored once
    assert not peeking.exceeds_level(detected, N_NULL, ALPHA)
    peek, anytime = peeking.peek_pvalues(values, scored, np.full(N_NULL, T_NULL), 0.25)
    assert int((anytime <= math.log10(ALPHA)).sum()) == detected  # the same e-process, read from the indicators
    assert peeking.exceeds_level(int((peek <= math.log10(ALPHA)).sum()), N_NULL, ALPHA)


@pytest.mark.parametrize("kw,msg", [
    (dict(algo="ems", seeding="minhash"), "seeding 'minhash' seeds the Bernoulli SplitMix64 green lists of"),
    (dict(algo="synthid", seeding="selfhash"), "seeding 'selfhash' seeds the Bernoulli SplitMix64 green lists of"),
    (dict(algo="its", seeding="skipgram"), "got algo='its'"),
    (dict(algo="srl", seeding="minhash", green_kind="partition", vocab_size=V), "green_kind='partition'"),
    (dict(algo="srl", seeding="nohash"), "seeding must be one of"),
    (dict(algo="srl", weights=[1, 2]), "weights are the tournament family's layer weights"),
    (dict(algo="synthid", m=4, weights=[1, 2]), "weights must hold m = 4 layer weights; got 2"),
])
def test_unsupported_combinations_are_one_clear_error(kw, msg):
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        SequentialDetector(KEY, context=[1, 2, 3], h=3, **kw)


def test_seed_pairs_are_the_references():
    """The stream's dedup names (seed, token) pairs with :func:`sims.core.seeding.seeds` of each window."""
    det = SequentialDetector(KEY, algo="srl", context=[4, 5, 6], h=3, vocab_size=V, seeding="selfhash")
    det.update(np.array([7, 8]))
    pairs = det._seed_pairs(np.array([9, 1]))
    ref = seeding_mod.seeds(KEY, np.array([[6, 7, 8], [7, 8, 9]]), "selfhash", np.array([9, 1]))
    assert pairs == [(int(ref[0]), 9), (int(ref[1]), 1)]
