"""One battery over every registered algorithm (:mod:`sims.watermarks.registry`), on every backend
it declares, against its NumPy reference step -- as scipy.stats loops one battery over every
distribution: a new algorithm is tested by registering it.

Backends: the Numba generator (every record; p_t from the synthetic LM, exact); the torch loop
engine on the CPU with a random-initialised tiny Llama (every record with a processor: the
logits each step hands the processor are captured, so the reference sees the same p_t); the
fused step where the record says so (the loop engine's FusedBoost for the processors that have
one, the static decoder for every ``fused`` record, p_t from the model's teacher-forced logits).
Each step: the sampled token has q_t(y) > 0, and G, entropy, KL(q_t || p_t), DG and lambda_t
equal the reference's; on torch the processor's output distribution equals q_t too.
Deterministic (fixed seeds and keys): a failure is a bug, not chance.
"""

import argparse
import inspect

import numpy as np
import pytest

import theory
from proofs_check import _exact
from sims.core import prf
from sims.lm.synthetic import open_synthetic
from sims.watermarks import registry
from sims.watermarks.generate import generate_synthetic

ALGOS = registry.names()
# parameters away from the defaults where a default would hide a bug (ATW's threshold bites at alpha = 1.5)
PARAMS = dict(srl=dict(delta=1.5), unigram=dict(delta=1.5, gamma=0.3), dipmark=dict(dip_alpha=0.3, gamma=0.4),
              dualga=dict(Delta=0.4, eta=1.0), autocov=dict(Delta=0.4), ems=dict(tau=0.8), atw=dict(alpha=1.5), sweet=dict(alpha=1.5),
              pf=dict(tau=0.8), gumbelsoft=dict(gs_tau=1.3), exp=dict(tau=0.8, exp_n=7),  # exp_n = 7 < T: the key sequence wraps
              synthid=dict(m=7, candidates=3, mask_repeated=0), morphmark=dict(morph_kappa=0.9, morph_p0=0.3, gamma=0.4))
# (rel, abs) per record
NUMBA_TOL = dict(G=(1e-12, 1e-15), entropy=(1e-10, 0), kl=(1e-9, 1e-14), dg=(1e-9, 1e-12), lam=(1e-12, 0))  # test_generate's: p_t exact
TORCH_TOL = dict(G=(1e-12, 1e-15), entropy=(1e-10, 1e-13), kl=(1e-9, 1e-13), dg=(1e-9, 1e-12), lam=(1e-12, 0))  # same float64 p_t
FORWARD_TOL = dict(G=(1e-5, 1e-7), entropy=(1e-5, 0), kl=(1e-5, 1e-9), dg=(1e-5, 1e-7), lam=(1e-5, 1e-7))  # float32 logits, recomputed
Q_ATOL = 2e-6  # the processor's float32 output logits


def _params(algo):
    return PARAMS.get(algo, {})


def _check_step(algo, rec, i, t, p, window, state, prm, key, tol, boost_record=False):
    """One step of text i against the reference; returns (q_t, the state after the sampled token).
    ``boost_record``: the torch processors of a fixed boost (SRL, ATW) record the boost used as
    lambda_t, which must then reproduce q_t."""
    q, states = registry.get(algo).reference(p, window, t, key, state, prm)
    green = prf.green_mask(prf.context_hash(key, window), p.shape[0], prm["gamma"], prm.get("green_kind", "bernoulli"))  # DiPmark: partition
    y = rec["tokens"][i, t]
    G = p[green].sum()
    assert q[y] > 0.0, (algo, i, t)
    expect = dict(G=G, entropy=theory.entropy(p), kl=_exact.kl_vec(q, p), dg=q[green].sum() - G)
    for k, v in expect.items():
        assert rec[k][i, t] == pytest.approx(v, rel=tol[k][0], abs=tol[k][1]), (algo, k, i, t)
    lam = rec["lam"][i, t]
    if "lam1" in registry.get(algo).params:
        assert lam == pytest.approx(state[0], rel=tol["lam"][0], abs=tol["lam"][1]), (algo, i, t)
    elif boost_record and not np.isnan(lam):
        tilted = p * np.exp(lam * green)
        np.testing.assert_allclose(tilted / tilted.sum(), q, rtol=0, atol=1e-12)
    else:
        assert np.isnan(lam)
    return q, states[y]


@pytest.mark.parametrize("h", [1, 2])
@pytest.mark.parametrize("algo", [a for a in ALGOS if "numba" in registry.get(a).backends and registry.get(a).generator is None])
def test_numba_generator_equals_reference(algo, h):
    """The Numba generator, lfqa LM at V = 2000, 2 texts x 25 tokens, seed 3, key 99: context
    width 1 with the default parameters, width 2 with those of ``PARAMS``."""
    lm = open_synthetic("lfqa", vocab_size=2000)
    key, T = 99, 25
    w = registry.get(algo).context_width  # a record with a fixed context width (Unigram: 0) runs at it, whatever h
    gen = generate_synthetic(lm, algo, n=2, T=T, seed=3, key=key, h=h if w is None else w, **(_params(algo) if h > 1 else {}))
    prm, P = gen.meta, gen.prompts.shape[1]
    assert prm["h"] == (h if w is None else w)
    h = prm["h"]
    rec = dict(tokens=gen.tokens, G=gen.G, entropy=gen.entropy, kl=gen.kl, dg=gen.dg, lam=gen.lam)
    for i in range(2):
        seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
        state = _exact.initial_state(prm)
        for t in range(T):
            _, state = _check_step(algo, rec, i, t, lm.probs(seq[: P + t]), seq[P + t - h : P + t], state, prm, key, NUMBA_TOL)


@pytest.mark.parametrize("h", [1, 2])
@pytest.mark.parametrize("algo", [a for a in ALGOS if registry.get(a).generator is not None])
def test_own_generator_equals_its_references(algo, h):
    """A record with its own Numba generator (synthid): lfqa LM at V = 2000, 3 texts x 40 tokens,
    seed 3, key 99; width 1 with the default parameters, width 2 with those of ``PARAMS``.  Tokens
    equal its ``generator_reference``'s and records within NUMBA_TOL; with those of ``PARAMS`` (no
    repeated-context mask) each step's KL is KL(q_t || p_t) of its reference step."""
    lm = open_synthetic("lfqa", vocab_size=2000)
    rec, key, T = registry.get(algo), 99, 40
    gen = generate_synthetic(lm, algo, n=3, T=T, seed=3, key=key, h=h, **(_params(algo) if h > 1 else {}))
    prm = registry.resolve_params(algo, **{k: gen.meta.get(k) for k in rec.params})
    tokens, ref = rec.generator_reference(lm, gen.prompts, T, 3, key, h, prm)
    np.testing.assert_array_equal(gen.tokens, tokens)
    for j, k in enumerate(("kl", "G", "dg", "entropy")):
        np.testing.assert_allclose(getattr(gen, k), ref[j], rtol=NUMBA_TOL[k][0], atol=NUMBA_TOL[k][1], err_msg=f"{algo} {k}")
    assert gen.meta["algo"] == algo and all(gen.meta[k] == prm[k] for k in rec.params)
    if h > 1:
        P = gen.prompts.shape[1]
        for i in range(3):
            seq = np.concatenate([gen.prompts[i], gen.tokens[i]])
            for t in range(T):
                p = lm.probs(seq[: P + t])
                q, _ = rec.reference(p, seq[P + t - h : P + t], t, key, (0.0, False), prm)
                assert q[gen.tokens[i, t]] > 0.0
                assert gen.kl[i, t] == pytest.approx(_exact.kl_vec(q, p), rel=NUMBA_TOL["kl"][0], abs=NUMBA_TOL["kl"][1]), (algo, i, t)


# ------------------------------------------------------------------------------------------ torch

V, KEY, T_TORCH = 512, 21, 12
PROMPTS = [[5, 9, 1, 3, 7, 2], [11, 2], [8, 8, 4]]


def _torch():
    return pytest.importorskip("torch")


@pytest.fixture(scope="module")
def model():
    _torch()
    from sims.lm.real.model import load

    return load("random-llama")[0]


class _Spy:
    """A processor that keeps the (input_ids, scores) of every call and its output."""

    def __init__(self, proc):
        self.proc, self.calls = proc, []

    def __call__(self, ids, scores):
        out = self.proc(ids, scores)
        self.calls.append((ids.clone(), scores.clone(), out.clone()))
        return out

    def __getattr__(self, name):
        return getattr(self.proc, name)


def _torch_backends():
    """(algo, fused) for every processor: unfused, and fused where its processor has a fused step."""
    try:
        from sims.torch_backend.processors import PROCESSORS
    except ImportError:  # no torch: the tests skip
        return [(a, False) for a in ALGOS]
    out = []
    for algo in ALGOS:
        if "torch" in registry.get(algo).backends:
            out.append((algo, False))
            if "fused" in inspect.signature(PROCESSORS[algo]).parameters:
                out.append((algo, None))  # FusedBoost: the Numba kernel on the CPU
    return out


@pytest.mark.parametrize("algo, fused", _torch_backends())
def test_torch_loop_engine_equals_reference(model, algo, fused):
    """The loop engine (random-llama, 3 left-padded prompts x 12 tokens, seed 2, key 21): the logits
    handed to the processor give p_t; records and the processor's output distribution equal the
    reference's.  ``fused=None`` runs SRL / DualGA through FusedBoost's CPU kernel."""
    torch = _torch()
    from sims.torch_backend.generate_torch import generate_with_processor
    from sims.torch_backend.processors import make_processor

    spy = _Spy(make_processor(algo, vocab_size=V, key=KEY, fused=fused, max_steps=T_TORCH, **_params(algo)))
    g = generate_with_processor(model, PROMPTS, T_TORCH, spy, seed=2)
    prm = registry.resolve_params(algo, **{k: g.meta.get(k) for k in registry.PARAMS}) | dict(green_kind=g.meta["green_kind"])
    if registry.get(algo).family == "tournament":
        return _check_tournament_torch(algo, g, spy, prm)
    assert prm["gamma"] == g.meta["gamma"] and g.meta["algo"] == algo
    rec = dict(tokens=g.tokens, G=g.G, entropy=g.entropy, kl=g.kl, dg=g.dg, lam=g.lam)
    states = [_exact.initial_state(prm)] * len(PROMPTS)
    for t, (ids, scores, out) in enumerate(spy.calls):
        p_all = torch.softmax(scores[:, :V].double(), -1).numpy()
        q_out = torch.softmax(out[:, :V].double(), -1).numpy()
        for i in range(len(PROMPTS)):
            window = ids[i, ids.shape[1] - spy.h :].numpy()  # the processor's width (Unigram: 0)
            q, states[i] = _check_step(algo, rec, i, t, p_all[i], window, states[i], prm, KEY, TORCH_TOL, boost_record=True)
            np.testing.assert_allclose(q_out[i], q, rtol=0, atol=Q_ATOL, err_msg=f"{algo} row {i} step {t}")
            if registry.get(algo).point_mass:  # logits -inf but at y
                assert torch.isinf(out[i, :V]).sum() == V - 1


def _check_tournament_torch(algo, g, spy, prm):
    """A tournament processor (no green list, no lambda): its output distribution is the reference
    step's q_t of the logits it was handed; kl and entropy are KL(q_t || p_t) and H(p_t) (the
    repeated-context mask is off: PARAMS sets mask_repeated 0)."""
    torch = _torch()
    assert prm["mask_repeated"] == 0
    for t, (ids, scores, out) in enumerate(spy.calls):
        p_all = torch.softmax(scores[:, :V].double(), -1).numpy()
        q_out = torch.softmax(out[:, :V].double(), -1).numpy()
        for i in range(len(PROMPTS)):
            q, _ = registry.get(algo).reference(p_all[i], ids[i, -1:].numpy(), t, KEY, None, prm)
            np.testing.assert_allclose(q_out[i], q, rtol=0, atol=Q_ATOL, err_msg=f"{algo} row {i} step {t}")
            assert g.kl[i, t] == pytest.approx(_exact.kl_vec(q, p_all[i]), rel=TORCH_TOL["kl"][0], abs=TORCH_TOL["kl"][1]), (i, t)
            assert g.entropy[i, t] == pytest.approx(theory.entropy(p_all[i]), rel=TORCH_TOL["entropy"][0], abs=TORCH_TOL["entropy"][1])


@pytest.mark.parametrize("algo", registry.names(fused=True))
def test_static_fused_engine_equals_reference(model, algo):
    """The static decoder's fused step (FusedBoost; random-llama, 3 prompts x 12 tokens, seed 2,
    key 21); p_t from the model's teacher-forced logits of each row alone."""
    torch = _torch()
    from sims.torch_backend.static_decode import generate_static

    g = generate_static(model, PROMPTS, T_TORCH, algo=algo, key=KEY, seed=2, **_params(algo))
    prm = registry.resolve_params(algo, **{k: g.meta.get(k) for k in registry.PARAMS})
    rec = dict(tokens=g.tokens, G=g.G, entropy=g.entropy, kl=g.kl, dg=g.dg, lam=g.lam)
    for i, prompt in enumerate(PROMPTS):
        seq = np.array(prompt + g.tokens[i].tolist())
        with torch.no_grad():
            logits = model(torch.tensor(seq[None])).logits[0, len(prompt) - 1 : -1, :V].double()
        p = torch.softmax(logits, -1).numpy()
        state = _exact.initial_state(prm)
        for t in range(T_TORCH):
            _, state = _check_step(algo, rec, i, t, p[t], seq[len(prompt) + t - 1 : len(prompt) + t], state, prm, KEY, FORWARD_TOL,
                                   boost_record=True)


def test_every_record_runs_where_it_declares():
    """A record declaring "numba" has a step in the generator, one declaring "torch" a processor
    (and only those); an algorithm without a Numba step is refused by the generator, not run as another."""
    from sims.torch_backend.processors import PROCESSORS
    from sims.watermarks.generate import STEPS

    for algo in ALGOS:
        rec = registry.get(algo)
        assert ("numba" in rec.backends) == (rec.code in STEPS or rec.generator is not None), algo
        assert rec.generator is None or (rec.code not in STEPS and rec.generator_reference is not None), algo
        assert ("torch" in rec.backends) == (algo in PROCESSORS), algo
    registry.register(registry.Algorithm("torch-only", 99, (), "redgreen", registry.get("none").reference, backends=("torch",)))
    try:
        with pytest.raises(ValueError, match="algo 'torch-only' has no step in the Numba generator"):
            generate_synthetic(open_synthetic("tiny"), "torch-only", n=1, T=1, seed=0, key=1)
    finally:
        registry._REGISTRY.pop("torch-only")


# ------------------------------------------------------------------------------ the clear errors

UNKNOWN = "algo must be one of \\('none', 'srl'"


def _cli(argv):
    from sims.cli.main import main

    return main(argv)


def test_an_unknown_name_is_one_clear_error_everywhere(tmp_path):
    from sims.detect.families import detectors
    from sims.experiments.evaluate import evaluate
    from sims.steal import generate_stealing_texts

    lm = open_synthetic("tiny")
    gen = generate_synthetic(lm, "srl", n=1, T=3, seed=0, key=1)
    calls = [lambda: registry.get("kgw"), lambda: generate_synthetic(lm, "kgw", n=1, T=2, seed=0, key=1),
             lambda: evaluate(lm, "kgw", n=1, T=2, seed=0), lambda: detectors.score(gen, lm, algo="kgw"),
             lambda: _exact.step("kgw", lm, 1, np.array([1]), 0, (0.0, False), {"gamma": 0.25}),
             lambda: generate_stealing_texts(lm, "kgw", n_max=1)]
    for call in calls:
        with pytest.raises(ValueError, match=UNKNOWN):
            call()
    with pytest.raises(ValueError, match="algo must be one of \\('srl'"):
        evaluate(lm, "none", n=1, T=2, seed=0)  # the control is no watermark
    from sims.sweep.grid import GridError, load_grid

    grid = tmp_path / "g.toml"
    grid.write_text('lm = "tiny"\n[[algo]]\nname = "kgw"\n')
    with pytest.raises(GridError, match="g.toml:3: key 'name': unknown algorithm 'kgw'"):
        load_grid(grid)


def test_the_torch_backend_refuses_an_unknown_name():
    _torch()
    from sims.torch_backend.processors import make_processor

    with pytest.raises(ValueError, match=UNKNOWN):
        make_processor("kgw", vocab_size=10)


@pytest.mark.parametrize("algo, given, takers", [("srl", dict(Delta=0.3), "\\('dualga', 'autocov'\\)"),
                                                 ("dualga", dict(delta=3.0), "\\('srl', 'atw', 'unigram', 'sweet'\\)"),
                                                 ("ems", dict(alpha=1.0), "\\('atw', 'sweet'\\)"),
                                                 ("its", dict(tau=0.5), "\\('ems', 'pf', 'exp'\\)"),
                                                 ("srl", dict(m=3), "\\('synthid',\\)"),
                                                 ("synthid", dict(delta=2.0), "\\('srl', 'atw', 'unigram', 'sweet'\\)")])
def test_a_foreign_parameter_is_refused_naming_who_takes_it(algo, given, takers, capsys):
    from sims.experiments.evaluate import evaluate

    lm = open_synthetic("tiny")
    (name, value), = given.items()
    msg = f"algo '{algo}' takes no parameter '{name}' \\(got {name}={value!r}\\); {name} is a parameter of {takers}"
    for call in (lambda: registry.check_params(algo, **given), lambda: generate_synthetic(lm, algo, n=1, T=2, seed=0, key=1, **given),
                 lambda: evaluate(lm, algo, n=1, T=2, seed=0, **given)):
        with pytest.raises(ValueError, match=msg):
            call()
    registry.check_params(algo, **{name: None})  # unset (the CLI's None) is not given
    assert _cli(["generate", "--lm", "tiny", "--algo", algo, f"--{name}", str(value), "--out", "x.npz"]) == 2
    assert f"takes no parameter '{name}'" in capsys.readouterr().err


def test_cli_options_come_from_the_registry(tmp_path):
    """Every registry parameter is an option whose unset value is None (the default comes from the
    registry), and a given one reaches the generator."""
    from sims.cli.generate import add_algo_arguments, algo_kwargs

    p = argparse.ArgumentParser()
    add_algo_arguments(p)
    args = p.parse_args(["--algo", "atw", "--alpha", "1.25"])
    assert all(getattr(p.parse_args([]), k) is None for k in registry.PARAMS)
    assert algo_kwargs(args) == dict(alpha=1.25)
    out = tmp_path / "g.npz"
    assert _cli(["generate", "--lm", "tiny", "--algo", "atw", "--alpha", "1.25", "--n", "2", "--T", "4", "--out", str(out)]) == 0
    from sims.core.record import Generation

    meta = Generation.load(out).meta
    assert meta["alpha"] == 1.25 and meta["delta"] == registry.PARAMS["delta"].default


@pytest.mark.parametrize("name, bad", [("gamma", 1.0), ("delta", -0.5), ("Delta", 0.0), ("eta", float("inf")), ("lam1", 16.0),
                                       ("tau", 0.0), ("alpha", -1.0), ("M", float("nan")), ("m", 65), ("m", 2.5),
                                       ("candidates", 1), ("mask_repeated", 2), ("gs_tau", 0.0), ("exp_n", 0)])
def test_every_parameter_check_names_the_parameter_its_value_and_range(name, bad):
    algo = next(a for a in ALGOS if name == "gamma" or name in registry.get(a).params)
    with pytest.raises(ValueError, match=f"^{name} must be (an integer )?in [\\[(]"):
        registry.resolve_params(algo, **{name: bad})


def test_registering_an_extra_algorithm():
    """A record with a used name or code, an unknown parameter or a family that is not a name is refused; a record
    naming an unregistered family is refused when its family is asked (the registered detector families are the one
    list of names, above the registry); a good one is listed, resolved and checked like the others (then removed again)."""
    from sims.detect import families

    base = registry.get("srl")
    for bad in (dict(name="srl"), dict(code=0), dict(params=("kappa",)), dict(family="not a name"), dict(family=None)):
        kw = dict(name="srl2", code=99, params=("delta",), family="redgreen", reference=base.reference) | bad
        with pytest.raises(ValueError):
            registry.register(registry.Algorithm(**kw))
    registry.register(registry.Algorithm("srl2", 99, ("delta",), "bayes", base.reference))
    try:
        with pytest.raises(ValueError, match="algo 'srl2' has detector family 'bayes', which is not registered"):
            families.of("srl2")
    finally:
        registry._REGISTRY.pop("srl2")
    registry.register(registry.Algorithm("srl2", 99, ("delta",), "redgreen", base.reference))
    try:
        assert registry.names()[-1] == "srl2" and registry.resolve_params("srl2", delta=3.0)["delta"] == 3.0
        with pytest.raises(ValueError, match="takes no parameter 'tau'"):
            registry.check_params("srl2", tau=2.0)
    finally:
        registry._REGISTRY.pop("srl2")


def test_every_record_has_its_own_colour_and_marker():
    """Each algorithm is drawn in one colour and with one marker in every figure (paper_figs.style reads them from its
    record): valid matplotlib values, no two records sharing a colour or a marker, none left at the default."""
    from matplotlib import colors, markers

    recs = [registry.get(a) for a in registry.names()]
    assert all(colors.is_color_like(r.color) for r in recs), [(r.name, r.color) for r in recs]
    assert all(r.marker in markers.MarkerStyle.markers for r in recs), [(r.name, r.marker) for r in recs]
    default = registry.Algorithm.__dataclass_fields__
    assert not [r.name for r in recs if r.color == default["color"].default], "a record without its own colour"
    assert len({colors.to_hex(r.color) for r in recs}) == len(recs), "two algorithms share a colour"
    assert len({r.marker for r in recs}) == len(recs), "two algorithms share a marker"
