"""``semantic`` seeding by a cluster table (an LM's own embedding clusters, :func:`sims.core.seeding.embedding_clusters`):
the SimHash of the rows, the table carried by the scheme's name from generation to detection, its cache by content,
and the Numba, NumPy and hash paths agreeing bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import sims
from sims.core import seeding
from sims.detect.stats import scores

KEY, H = 0x5EED, 2


def test_embedding_clusters_of_one_dimensional_rows_are_the_planes_signs():
    """d = 1: a centred row x > 0 falls on the side of each plane r_k that r_k's sign says, x < 0 on the other, so
    the two clusters are bitwise complements (c ^ 63); equal rows share a cluster; a positive scale and a shift of
    every row change nothing (the centring); every cluster lies in [0, CLUSTERS)."""
    w = np.array([[1.0], [3.0], [3.0], [-2.0]])  # mean 1.25: centred -0.25, 1.75, 1.75, -3.25
    c = seeding.embedding_clusters(w)
    assert c.dtype == np.int64 and c.shape == (4,) and ((0 <= c) & (c < seeding.CLUSTERS)).all()
    assert c[1] == c[2] and c[0] == c[3] and c[0] == c[1] ^ (seeding.CLUSTERS - 1)
    np.testing.assert_array_equal(seeding.embedding_clusters(2.5 * w + 7.0), c)


def test_embedding_clusters_group_near_rows():
    """Rows within 1e-3 of one of 8 random centres (dimension 32, seed 1): every row shares its centre's cluster
    unless a plane passes between them, which at that distance does not happen for these draws; the 8 centres
    fall in more than one cluster."""
    rng = np.random.default_rng(1)
    centres = rng.standard_normal((8, 32))
    rows = np.repeat(centres, 5, axis=0) + 1e-3 * rng.standard_normal((40, 32))
    c = seeding.embedding_clusters(rows).reshape(8, 5)
    assert (c == c[:, :1]).all() and len(set(c[:, 0].tolist())) > 1
    with pytest.raises(ValueError, match="weight must be a"):
        seeding.embedding_clusters(np.zeros(5))


def test_a_table_equal_to_the_hash_gives_the_hash_seeds():
    """The table lookup and the public hash are two paths to the same clusters: a table holding clusters(id) seeds
    every window (V = 300, 200 windows of h = 3, seed 0) as the hash does, in NumPy and in the Numba scalar."""
    V = 300
    table = seeding.clusters(np.arange(V))
    w = np.random.default_rng(0).integers(0, V, size=(200, 3))
    want = seeding.seeds(KEY, w, "semantic")
    np.testing.assert_array_equal(seeding.seeds(KEY, w, seeding.with_clusters("semantic", table)), want)
    got = [seeding.seed_hash_nb(np.uint64(KEY), w[i], seeding.SEMANTIC, table) for i in range(len(w))]
    np.testing.assert_array_equal(np.array(got, dtype=np.uint64), want)


def test_numba_and_numpy_agree_under_a_random_table_and_synonyms_keep_the_seed():
    """A random table (V = 100 ids in 64 clusters, seed 3): the Numba seed equals the NumPy one window by window;
    swapping a window token for another id of its cluster keeps the seed, for one of another cluster changes it
    (for these draws), and the table changes the seeds against the hash."""
    V = 100
    rng = np.random.default_rng(3)
    table = rng.integers(0, seeding.CLUSTERS, size=V)
    sem = seeding.with_clusters("semantic", table)
    w = rng.integers(0, V, size=(50, H))
    ref = seeding.seeds(KEY, w, sem)
    np.testing.assert_array_equal(np.array([seeding.seed_hash_nb(np.uint64(KEY), w[i], seeding.SEMANTIC, table) for i in range(50)],
                                           dtype=np.uint64), ref)
    assert (ref != seeding.seeds(KEY, w, "semantic")).mean() > 0.9
    for i in range(50):
        x = int(w[i, 0])
        same = [v for v in range(V) if table[v] == table[x] and v != x]
        other = next(v for v in range(V) if table[v] != table[x])
        if same:
            assert seeding.seeds(KEY, np.array([same[0], w[i, 1]]), sem) == ref[i]
        assert seeding.seeds(KEY, np.array([other, w[i, 1]]), sem) != ref[i]


def test_a_generation_seeded_by_a_table_names_it_and_is_detected_by_it(tmp_path, monkeypatch):
    """SRL delta 4, semantic seeding by a random table on news (V = 500, 4 x 60 tokens, h = 2, seed 0): meta names
    the table, which the cache returns; sims.score's dedup'd green counts equal the reference's under the same
    table, every text is detected at 1e-4, and the same tokens read with the public hash instead score fewer greens."""
    monkeypatch.setenv("WMSTATS_CACHE", str(tmp_path))
    lm = sims.get_lm("news", vocab_size=500)
    table = np.random.default_rng(5).integers(0, seeding.CLUSTERS, size=500)
    gen = sims.generate(lm, "srl", n=4, T=60, seed=0, key=KEY, h=H, delta=4.0, seeding=seeding.with_clusters("semantic", table))
    assert gen.meta["seeding"] == "semantic" and type(gen.meta["seeding"]) is str
    np.testing.assert_array_equal(seeding.clusters_of(gen.meta), table)
    r = sims.score(gen, dedup=True)
    ref, _ = scores.token_scores_reference(gen.tokens, gen.prompts[:, -H:], KEY, gamma=0.25, h=H, vocab_size=500, dedup=True,
                                           seeding=seeding.with_clusters("semantic", table))
    np.testing.assert_array_equal(r.score, ref.sum(axis=1))
    assert (r.log10_p < -4).all()
    plain = dict(gen.meta)
    del plain["clusters"]
    hashed = sims.score(sims.Generation(gen.tokens, gen.prompts, gen.kl, gen.G, gen.dg, gen.entropy, gen.lam, plain), dedup=True)
    assert (hashed.score < r.score).all()


def test_a_missing_or_altered_table_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("WMSTATS_CACHE", str(tmp_path))
    table = np.arange(70) % seeding.CLUSTERS
    name = seeding.store_clusters(table)
    assert seeding.store_clusters(table) == name and len(name) == 16
    np.testing.assert_array_equal(seeding.clusters_of({"clusters": name}), table)
    assert seeding.clusters_of({}) is seeding.NO_CLUSTERS
    np.save(tmp_path / "clusters" / f"{name}.npy", table[::-1].copy())
    with pytest.raises(ValueError, match="does not match its name"):
        seeding.clusters_of({"clusters": name})
    with pytest.raises(ValueError, match="is not in the cache"):
        seeding.clusters_of({"clusters": "0" * 16, "lm": "smollm2"})
    with pytest.raises(ValueError, match="clusters in \\[0, 64\\)"):
        seeding.store_clusters(np.array([0, 64]))
    with pytest.raises(ValueError, match="applies to seeding 'semantic'"):
        seeding.with_clusters("minhash", table)
    with pytest.raises(ValueError, match="a cluster for each of the 500 ids"):
        sims.generate(sims.get_lm("news", vocab_size=500), "srl", n=1, T=4, seed=0, key=KEY,
                      seeding=seeding.with_clusters("semantic", table))


def test_the_synonym_attack_swaps_within_the_generation_s_own_clusters(tmp_path, monkeypatch):
    """The synonym attack (rate 0.5, seed 2) on a generation seeded by a random table (news V = 500, 3 x 40, seed 0)
    replaces tokens only by ids of the same table cluster (so the table's seeds are unchanged); against the hash
    clusters the swaps mostly cross."""
    monkeypatch.setenv("WMSTATS_CACHE", str(tmp_path))
    lm = sims.get_lm("news", vocab_size=500)
    table = np.random.default_rng(5).integers(0, seeding.CLUSTERS, size=500)
    gen = sims.generate(lm, "srl", n=3, T=40, seed=0, key=KEY, h=H, delta=4.0, seeding=seeding.with_clusters("semantic", table))
    att = sims.attack(gen, "synonym", 0.5, seed=2)
    changed = att.tokens != gen.tokens
    assert changed.mean() > 0.3
    np.testing.assert_array_equal(table[att.tokens], table[gen.tokens])
    hashed = seeding.clusters(np.arange(500))
    assert (hashed[att.tokens[changed]] != hashed[gen.tokens[changed]]).mean() > 0.9
