"""sims.plan and ``sims plan``: sane answers, monotone in the signal (query time: bench/bench_plan.py)."""

import json
import math

import numpy as np
import pytest

from sims.cli.main import main
from sims.plan import parse_attack, plan


def test_plan_orders():
    a = plan("srl", lm="news", delta=2.0, fpr=1e-6, power=0.9, T=60)
    b = plan("srl", lm="news", delta=1.0, fpr=1e-6, power=0.9)
    c = plan("srl", lm="news", delta=2.0, fpr=1e-6, power=0.9, attack="substitution:0.3")
    assert a["tokens_needed"] < b["tokens_needed"] and a["tokens_needed"] < c["tokens_needed"]
    e = plan("ems", lm="news", score="ems-opt", fpr=1e-6, power=0.9)
    assert 5 < e["tokens_needed"] < 100


def test_plan_rejects_bad_input():
    with pytest.raises(ValueError, match="score must be one of"):
        plan("srl", lm="news", score="ems-opt")
    with pytest.raises(ValueError, match="attack must be"):
        parse_attack("deletion:0.2")
    with pytest.raises(ValueError, match="algo must be one of"):
        plan("uw-delta", lm="news")


def test_cli_plan(capsys, tmp_path):
    out = tmp_path / "c.png"
    assert main(["plan", "--algo", "srl", "--lm", "news", "--fpr", "1e-4", "--power", "0.8", "--T", "50", "--json", "--plot", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tokens_needed"] > 0 and 0 <= doc["power_at_T"] <= 1 and out.stat().st_size > 1000
    assert main(["plan", "--algo", "srl", "--lm", "news", "--attack", "typo:1"]) == 2


def test_plan_dedup_scores_each_pair_once():
    """tiny (6 tokens, h = 1): at most 36 (context, token) pairs, so with dedup a text scores at most 36 tokens
    and the power stops growing with T; dedup is planned for the green count only."""
    a = plan("srl", lm="tiny", delta=2.0, fpr=1e-2, power=0.5, curve=(16, 64, 256))["curve"]
    b = plan("srl", lm="tiny", delta=2.0, fpr=1e-2, power=0.5, curve=(16, 64, 256), dedup=True)["curve"]
    assert all(pb < pa for (_, pa), (_, pb) in zip(a, b)) and a[2][1] > 0.999 and b[2][1] < 0.95
    with pytest.raises(ValueError, match="dedup is planned for the green count"):
        plan("ems", lm="news", score="ems-opt", dedup=True)
    with pytest.raises(ValueError, match="dedup is planned for the green count"):
        plan("srl", lm="news", score="lr", dedup=True)


def test_clean_share_counts_substitutions_without_replacement():
    """Brute force: seed 0, 20,000 draws of round(0.3 T) positions among T = 13, h = 1; the share of
    tokens with neither them nor their predecessor drawn matches within 99.9 % (sd ~0.001)."""
    import numpy as np

    from sims.plan import clean_share

    rng = np.random.default_rng(0)
    T, m = 13, 4
    hits = []
    for _ in range(20000):
        d = np.zeros(T, dtype=bool)
        d[rng.choice(T, m, replace=False)] = True
        hits.append(np.mean(~(d | np.concatenate([[False], d[:-1]]))))
    assert abs(np.mean(hits) - clean_share(T, 0.3, 1)) < 0.004
    assert clean_share(50, 0.0, 1) == 1.0


def test_lr_plan_states_its_repeated_window_limit(capsys):
    """--score lr: the answer and the CLI's table state that the LR detector's dropped repeated context windows
    are not modelled; the green count, which scores every position, carries no such line."""
    out = plan("srl", lm="tiny", delta=2.0, score="lr", fpr=1e-2, power=0.5)
    assert "context window" in out["limits"] and "repeats" in out["limits"]
    assert "limits" not in plan("srl", lm="tiny", delta=2.0, fpr=1e-2, power=0.5)
    assert main(["plan", "--algo", "srl", "--lm", "tiny", "--delta", "2", "--score", "lr", "--fpr", "1e-2", "--power", "0.5"]) == 0
    assert any(line.startswith("limits") and "not model" in line for line in capsys.readouterr().out.splitlines())


def test_new_pair_green_mass_against_the_green_lists():
    """plan.new_pair_green_mass on tiny (6 tokens, h = 1, every window repeats): at each position, the green mass of
    the LM's distribution restricted to tokens not yet seen after that window, from the PRF's green lists
    directly (prf.green_mask); G_t where the window is new."""
    import numpy as np

    from sims.core import prf
    from sims.detect.stats.scores import token_scores
    from sims.lm.synthetic import open_synthetic
    from sims.plan import new_pair_green_mass
    from sims.watermarks.generate import generate_synthetic

    lm, key = open_synthetic("tiny"), 12345
    g = generate_synthetic(lm, "srl", n=3, T=30, seed=5, key=key, delta=2.0)
    X, _ = token_scores(g.tokens, g.prompts[:, -1:], key, gamma=g.meta["gamma"], h=1, vocab_size=lm.vocab_size, dedup=True)
    got = new_pair_green_mass(lm, g, X > 0.5, 1)  # the dedup scan's values: green flags at first occurrences
    P, gam = g.prompts.shape[1], g.meta["gamma"]
    changed = 0
    for i in range(3):
        seq = np.concatenate([g.prompts[i], g.tokens[i]])
        probs = lm.probs_along(seq, P, 30)
        for t in range(30):
            ctx = seq[P + t - 1 : P + t]
            seen = {int(seq[P + s]) for s in range(t) if seq[P + s - 1] == ctx[0]}
            green = prf.green_mask(prf.context_hash(key, ctx), lm.vocab_size, gam)
            new = np.array([y not in seen for y in range(lm.vocab_size)])
            want = probs[t, green & new].sum() / probs[t, new].sum() if seen else g.G[i, t]
            assert got[i, t] == pytest.approx(want, abs=1e-12)
            changed += bool(seen) and abs(want - g.G[i, t]) > 1e-6
    assert changed > 20  # the restriction matters on most positions


def test_the_planned_scores_are_the_records():
    """The planner's numba-free copy of what it plans equals the records' ``plan_scores``; the boosts it reads are the records'."""
    from sims import plan
    from sims.watermarks import registry

    assert plan.PLAN_SCORES == {a: registry.get(a).plan_scores for a in registry.names() if registry.get(a).plan_scores}
    G = np.array([[0.2, 0.5], [0.4, 0.1]])
    assert plan.text_boost("srl", dict(delta=1.5), G) == 1.5 and plan.text_boost("hard", {}, G) == math.inf
