"""Exact next-token distributions of every watermark on small LMs, for enumeration.

:func:`step` returns the watermarked distribution :math:`q_t` (a full vector) after a
prefix, and the algorithm's state after each possible next token: the NumPy reference step of
the algorithm's record (:mod:`sims.watermarks.registry`), written from the algorithms'
definitions in the paper (Algorithms kirchen, DualGA, DualGA_autocov; EMS, ITS, UW as in
appendix "Watermarking Algorithms") on full vectors, independently of the Numba generator
:mod:`sims.watermarks.generate`; only the keyed randomness (green lists, EMS uniforms, the keyed
order, ITS's per-position uniform) is read from :mod:`sims.core.prf` / :mod:`sims.core.rng`,
since a watermark *is* its key.  ``check_info_lower_bound`` tests this model against the generator.

The state is ``(lambda, colour of the previous token)``; DualGA's lambda update does
not depend on the sampled token, DualGA-AutoCov's next step does (through the colour).
"""

from __future__ import annotations

import numpy as np

from sims.watermarks import registry
from sims.watermarks.generate import algo_params

EXACT_ALGOS = tuple(sorted(registry.names(generator=None), key=lambda a: not registry.get(a).siphash))[1:]
"""Every watermark of the registry that is a step of the generator (``none`` is p itself), the boosting
schemes first; one with its own generator (synthid, whose repeated-context mask reads the text's history,
not the step's state) is checked against its own reference by ``tests/watermarks/test_registry_battery.py``."""

State = tuple[float, bool]


def step(algo: str, lm, key: int, prefix: np.ndarray, t: int, state: State, params: dict) -> tuple[np.ndarray, list[State]]:
    r"""Watermarked :math:`q_t` after ``prefix`` (prompt + t generated tokens) and the next states:
    the registry's NumPy reference step of ``algo`` on :math:`p_t` = ``lm.probs(prefix)``.

    .. math:: q_{t,k} = \frac{p_{t,k} e^{\delta_t 1\{k\ \mathrm{green}\}}}{\sum_{k'} p_{t,k'} e^{\delta_t 1\{k'\ \mathrm{green}\}}}
              \quad\text{(soft schemes)},\qquad q_t = \text{point mass (EMS, ITS, UW-}\delta\text{)}

    Returns ``(q, states)`` with ``states[k]`` the state after emitting token k; an unknown
    ``algo`` raises ValueError (:func:`sims.watermarks.registry.get`).
    """
    return registry.get(algo).reference(lm.probs(prefix), prefix[-params.get("h", 1):], t, key, state, params)


def default_params(algo: str) -> dict:
    """The generator's documented defaults (DualGA/AutoCov: Delta = 0.3; SRL/ATW: delta = 2, alpha = 1)."""
    _, info = algo_params(algo, alpha=1.0 if "alpha" in registry.get(algo).params else None)  # alpha = 1 so that ATW's threshold bites
    return info


def initial_state(params: dict) -> State:
    """lambda_1 and the colour of y_0 (Algorithm DualGA_autocov colours y_0 red)."""
    return (params.get("lam1", 0.0) or 0.0, False)


def kl_vec(q: np.ndarray, p: np.ndarray) -> float:
    r""":math:`\sum_k q_k \log(q_k / p_k)` with 0 log 0 = 0, directly on full vectors."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.sum(np.where(q > 0, q * np.log(q / p), 0.0)))


def sequence_laws(algo: str | None, lm, key: int, prompt: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray, float]:
    r"""All :math:`V^T` continuations: their probabilities under p and q, and the stepwise KL sum.

    Returns ``(p_seq, q_seq, stepwise)`` where

    .. math:: \mathrm{stepwise} = \sum_{t=1}^{T} \sum_{y_{[t-1]}} q(y_{[t-1]})\, D_{kl}(q_t(\cdot|y_{[t-1]}) \| p_t(\cdot|y_{[t-1]}))

    is the right-hand side of Prop. KL_decompose computed prefix by prefix.
    """
    V = lm.vocab_size
    params = default_params(algo) if algo else {}
    frontier = [(np.asarray(prompt, dtype=np.int64), 1.0, 1.0, initial_state(params))]
    stepwise = 0.0
    for t in range(T):
        nxt = []
        for prefix, pp, qq, state in frontier:
            p = lm.probs(prefix)
            q, states = step(algo, lm, key, prefix, t, state, params) if algo else (p, [state] * V)
            stepwise += qq * kl_vec(q, p)
            for k in range(V):
                nxt.append((np.append(prefix, k), pp * p[k], qq * q[k], states[k]))
        frontier = nxt
    return np.array([f[1] for f in frontier]), np.array([f[2] for f in frontier]), stepwise
