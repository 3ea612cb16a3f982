"""Watermarked generation on the synthetic LMs, every algorithm of the paper, exact records.

Every step computes the full next-token distribution :math:`p_t`, the key's green
list (:mod:`sims.core.prf`, context = the last ``h`` tokens), and records the exact
:math:`D_{kl}(q_t\\|p_t)`, :math:`G_t`, :math:`\\mathrm{DG}_t = q_{G,t} - G_t`, the entropy of
:math:`p_t` and :math:`\\lambda_t` (the boost used, where the algorithm has one).

Algorithms (``ALGOS``):

==============  ==========================================================================
``none``        sample from p
``srl``         soft red list, fixed delta (Algorithm kirchen); KL = closed form
``hard``        sample from p restricted to the green list (delta = inf); KL = -log G
                (if G = 0 the step is unwatermarked)
``dualga``      Algorithm DualGA: delta_t = lambda_t, lambda <- Pi_[0,M](lambda + eta (Delta - DG_t))
``autocov``     Algorithm DualGA_autocov: boost green after a red token, red after a green one;
                lambda <- Pi_[0,M](lambda + eta (Delta + DA_t))
``ems``         exponential minimum sampling: y = argmax_k r_k^(1/p_tau,k), r from the key
                (stream EMS, context-keyed); q is a point mass, KL = -log p(y)
``its``         inverse transform sampling (Kuditipudi et al.): u_t from the key and the
                position t, vocabulary in a fixed keyed order; KL = -log p(y)
``uw-delta``    unbiased watermark, delta-reweight: as ITS with a context-keyed u_t
``uw-gamma``    unbiased watermark, gamma-reweight: keyed order and direction bit; the lower
                half of the cumulative mass is dropped, the upper half doubled; KL exact
``atw``         adaptive text watermark: boost delta only where the entropy of p_t exceeds
                alpha (its semantic hash is replaced by the context hash here)
``unigram``     Unigram (Zhao et al. 2023): SRL's step at context width 0, one fixed green list
                (:mod:`sims.watermarks.unigram`)
``dipmark``     DiPmark (Wu et al. 2023): alpha-reweight of a keyed permutation
                (:mod:`sims.watermarks.dipmark`)
``morphmark``   MorphMark (Wang et al. 2025): the mass r (1 - G) moved to the green list,
                r = min(exp(kappa G) - 1, 1) where G >= p0 (:mod:`sims.watermarks.morphmark`)
``sweet``       SWEET (Lee et al. 2023): ATW's step (boost delta where the entropy of p_t exceeds
                alpha); its detector counts only those positions (:mod:`sims.detect.stats.gated_scores`)
``pf``          Permute-and-Flip (Zhao, Li, Wang 2024): y = argmax log(p_k)/tau - log r_k, r = 1 - the
                EMS stream's uniforms; a point mass, KL = -log p(y) (:mod:`sims.watermarks.pf`)
``gumbelsoft``  GumbelSoft (Fu et al. 2024): a draw from softmax((log p + g)/gs_tau), g the EMS
                stream's Gumbel noise; KL exact over V (:mod:`sims.watermarks.gumbelsoft`)
``exp``         EXP (Kuditipudi et al. 2023): EMS's rule with r = xi_{t mod exp_n}, the key sequence
                indexed by the position t (:func:`sims.core.keys.position_hash_nb`); KL = -log p(y)
==============  ==========================================================================

Two exact paths compute a step.  The boosting watermarks (``none``, ``srl``, ``hard``,
``dualga``, ``autocov``, ``atw``, ``unigram``, ``morphmark``, ``sweet``) with Bernoulli green lists only need the green mass and
one draw: their step reads the LM's tabulated weights in one fused pass that hashes the
green list on the fly (normaliser and entropy are O(1), :mod:`sims.lm.synthetic`), and builds
:math:`p_t` and the green list only in the block of 512 ids the inverse-CDF draw lands in.
The others (and ``green_kind="partition"``) build :math:`p_t` and the green list over the
whole vocabulary (:mod:`sims.watermarks._kernels`).  Both are tested against the NumPy reference
and against each other.

The kernel :func:`_generate` computes p_t's masses once per step and hands them to one step
function per algorithm family (:func:`_boost_step` for SRL, DualGA, AutoCov and ATW,
:func:`_morph_step` for MorphMark, :func:`_hard_step`, :func:`_ems_step`, :func:`_keyed_order_step` for ITS and both UW, and the steps of their own
modules: DiPmark's, :func:`sims.watermarks.pf.pf_step`, :func:`sims.watermarks.gumbelsoft.gumbelsoft_step`), selected by
the named codes ``NONE`` ... ``GUMBELSOFT``; parameters travel as the named records :class:`AlgoParams`,
:class:`LMTables` and :class:`Keying`.  The dual updates are :func:`theory.dualga_update` and
:func:`theory.autocov_update`, inlined from :mod:`theory._scalar`.

Sampling randomness is a counter stream (:mod:`sims.core.rng`) of (seed, text index), so a
text does not depend on how many texts run beside it.  Choices the paper's code leaves
implicit: lambda_1 defaults to the certainty-equivalent delta*(Delta, gamma), eta to 0.5
(the paper's tuned values lie in [0.1, 2]), gamma to gamma*(Delta) for DualGA; no
nucleus truncation (KL and sampling use the same full distribution); the key enters
every hash (a different key gives independent green lists).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit, prange

from sims.core import defaults, keys, prf, prf_crypto, rng
from sims.core import seeding as seeding_mod
from sims.core.keys import ITS_STREAM, keyed_order
from sims.core.prf import green_threshold, token_mix
from sims.core.progress import in_chunks
from sims.core.record import Generation
from sims.lm import synthetic as lm_mod
from sims.lm.synthetic import SyntheticLM
from sims.watermarks import _kernels as kern
from sims.watermarks import dipmark, gumbelsoft, morphmark, pf, registry
from theory import _scalar

#: Names of every registered watermark algorithm (``sims.watermarks.registry``), in registry order: what
#: ``generate_synthetic(algo=...)`` (and ``sims.generate``) accepts, ``"none"`` (no watermark) included.
ALGOS = registry.names()
#: The kernel's integer code of each algorithm (its registry record's ``code``).
NONE, SRL, HARD, DUALGA, AUTOCOV, EMS, ITS, UW_DELTA, UW_GAMMA, ATW = (registry.get(a).code for a in (
    "none", "srl", "hard", "dualga", "autocov", "ems", "its", "uw-delta", "uw-gamma", "atw"))
#: The kernel codes of Unigram, DiPmark and MorphMark (their records' ``code``).
UNIGRAM, DIPMARK, MORPHMARK = (registry.get(a).code for a in ("unigram", "dipmark", "morphmark"))
#: The kernel codes of Permute-and-Flip and GumbelSoft (their records' ``code``).
PF, GUMBELSOFT = registry.get("pf").code, registry.get("gumbelsoft").code
EXP = registry.get("exp").code  #: EXP's kernel code (its record's): EMS's step keyed by the position
SWEET = registry.get("sweet").code  #: SWEET's kernel code (its record's); it runs ATW's step
#: the codes _generate has a step for
STEPS = (NONE, SRL, HARD, DUALGA, AUTOCOV, EMS, ITS, UW_DELTA, UW_GAMMA, ATW, UNIGRAM, DIPMARK, MORPHMARK, SWEET, PF, GUMBELSOFT, EXP)

# every parameter of the registry; the order is part of the kernel's type and moves the last bits of its
# vectorised sums (a new parameter is appended)
AlgoParams = namedtuple("AlgoParams", "delta Delta eta lam1 M tau alpha gamma dip_alpha morph_kappa morph_p0 gs_tau exp_n")
AlgoParams.__doc__ = """An algorithm's parameters as the kernel reads them: every one of
:data:`sims.watermarks.registry.PARAMS` as a float (0.0 where None).

Parameters
----------
delta : float
    Logit boost of the green list in nats (the soft red list, the paper's Algorithm 1).
Delta : float
    Target DG per token of the adaptive algorithms (DualGA, Algorithm 2).
eta : float
    DualGA's dual step size.
lam1 : float
    DualGA's initial dual variable lambda_1, in [0, M].
M : float
    Projection bound of DualGA's lambda.
tau : float
    EMS / PF sampling temperature.
alpha : float
    Entropy threshold in nats (the entropy-gated steps).
gamma : float
    Green-list fraction.
dip_alpha : float
    DiPmark's reweight alpha.
morph_kappa, morph_p0 : float
    MorphMark's strength constant and threshold.
gs_tau : float
    GumbelSoft's softmax temperature.
exp_n : float
    EXP's key-sequence length n (an integer)."""

LMTables = namedtuple("LMTables", "V order seed params levels base table level_sums")
LMTables.__doc__ = """A :class:`~sims.lm.synthetic.SyntheticLM` as its kernels read it (see :mod:`sims.lm.synthetic`).

Parameters
----------
V : int
    Vocabulary size.
order : int
    Markov order: the number of previous tokens the next-token distribution reads.
seed : int
    The LM's seed (its context hash).
params : numpy.ndarray
    The LM's parameter vector (:attr:`~sims.lm.synthetic.SyntheticLM.params`).
levels : numpy.ndarray, shape (N_LEVELS,)
    Inverse temperatures beta_l.
base : numpy.ndarray, shape (V,)
    Base logits b_j.
table : numpy.ndarray, shape (N_LEVELS, V)
    exp(beta_l b_j).
level_sums : numpy.ndarray, shape (N_LEVELS, 2)
    Row sums of ``table`` and of ``table * base``: each level's normaliser and mean numerator."""

Keying = namedtuple("Keying", "key h threshold partition n_green tokmix perm siphash k0 k1 seeding anchors clusters")
Keying.__doc__ = """The watermark's keyed objects: ``key`` (uint64), context width ``h``, the green
threshold of :func:`sims.core.prf.green_threshold`, ``partition`` (exactly ``n_green`` green ids
instead of Bernoulli lists), the PRF's per-token mix ``tokmix``, the keyed order ``perm``, and
``siphash`` with SipHash's key words ``k0, k1`` (green lists of :mod:`sims.core.prf_crypto`), and the
seeding scheme's code ``seeding`` with, for ``selfhash``, the candidates' hashes ``anchors`` and, for ``semantic``,
the cluster table ``clusters`` (:data:`sims.core.seeding.NO_CLUSTERS`: the public hash; :mod:`sims.core.seeding`).

Parameters
----------
key : numpy.uint64
    SplitMix64's watermark key (unused by the SipHash-keyed schemes).
h : int
    Context width of the green-list hash.
threshold : int
    Green threshold of :func:`sims.core.prf.green_threshold`: a token is green when its bits fall below it.
partition : bool
    Exactly ``n_green`` green ids per context instead of Bernoulli lists.
n_green : int
    floor(gamma V), at least 1: the size of a partition green list.
tokmix : numpy.ndarray of uint64, shape (V,)
    The PRF's per-token mix (:func:`sims.core.prf.token_mix`).
perm : numpy.ndarray, shape (V,)
    The keyed order of the vocabulary (:func:`sims.core.keys.keyed_order`).
siphash : bool
    Green lists keyed by SipHash-2-4 (:mod:`sims.core.prf_crypto`).
k0, k1 : numpy.uint64
    SipHash's key words.
seeding : int
    The seeding scheme's code (:data:`sims.core.seeding.SEEDINGS`).
anchors : numpy.ndarray of uint64
    For ``selfhash``, each token id's hash; empty otherwise.
clusters : numpy.ndarray
    For ``semantic`` with a cluster table, each id's cluster; empty otherwise."""
SIPHASH_ALGOS = registry.names(siphash=True)  #: the red-green schemes prf="siphash" keys


@njit(cache=True, inline="always")
def _tabulated(algo, partition):
    """Whether a step reads the LM's tables without building p_t over V: the boosting watermarks
    with Bernoulli green lists."""
    boosting = (algo == NONE or algo == SRL or algo == HARD or algo == DUALGA or algo == AUTOCOV or algo == ATW or algo == UNIGRAM
                or algo == MORPHMARK or algo == SWEET)
    return boosting and not partition


@njit(cache=True, inline="always")
def _green_list(ctx_hash, thr, partition, n_green, tokmix, bits, green):
    """The green list after a context with hash ``ctx_hash`` as 0.0/1.0 (:mod:`sims.watermarks._kernels`)."""
    if not partition:
        kern.green_into(ctx_hash, tokmix, thr, green)
        return
    for k in range(tokmix.shape[0]):
        bits[k] = prf.mix64_nb(ctx_hash ^ tokmix[k])
    kth = np.partition(bits.copy(), n_green - 1)[n_green - 1]
    for k in range(tokmix.shape[0]):
        green[k] = 1.0 if bits[k] <= kth else 0.0


@njit(cache=True)
def _siphash_green_list(k0, k1, window, thr, state, green):
    """The SipHash-keyed Bernoulli green list after ``window`` as 0.0/1.0 (:mod:`sims.core.prf_crypto`)."""
    prf_crypto.context_state_nb(k0, k1, window, prf.GREEN, state)
    for k in range(green.shape[0]):
        green[k] = 1.0 if prf_crypto.is_green_nb(state, k, thr) else 0.0


@njit(cache=True)
def _tabulated_masses(wctx, thr, tokmix, table, level_sums, levels, base, lm_state, mod_tok, mod_logit, blk_green, blk_red):
    """Block masses of :math:`e_k = e^{\\ell_k - c}` and :math:`\\sum_k e_k (\\ell_k - c)` from the LM's
    tables (:mod:`sims.lm.synthetic`): one fused pass for the green list, O(1) for the rest, then
    the bumped tokens' corrections.  ``lm_state = (level, off, n_mod, c)`` of ``context_into``."""
    level, off, n_mod, c = lm_state
    V = tokmix.shape[0]
    kern.rotated_masses(wctx, tokmix, table[level], off, thr, blk_green, blk_red)
    scale = math.exp(-c)
    for b in range(blk_green.shape[0]):
        blk_green[b] *= scale
        blk_red[b] *= scale
    beta = levels[level]
    acc = scale * (beta * level_sums[level, 1] - c * level_sums[level, 0])
    for q in range(n_mod):
        k = mod_tok[q]
        j = lm_mod.base_index(k, off, V)
        w0 = scale * table[level, j]
        w1 = math.exp(mod_logit[q] - c)
        if prf.is_green_nb(wctx, k, thr):
            blk_green[k // kern.BLOCK] += w1 - w0
        else:
            blk_red[k // kern.BLOCK] += w1 - w0
        acc += w1 * (mod_logit[q] - c) - w0 * (beta * base[j] - c)
    return acc


@njit(cache=True)
def _tabulated_block(b, wctx, thr, tokmix, row, lm_state, mod_tok, mod_logit, eb, gb):
    """``e`` and the green mask of block ``b`` alone (what the sampler scans); returns its length."""
    _, off, n_mod, c = lm_state
    V = tokmix.shape[0]
    k0 = b * kern.BLOCK
    m = min(V, k0 + kern.BLOCK) - k0
    scale = math.exp(-c)
    for i in range(m):
        eb[i] = scale * row[lm_mod.base_index(k0 + i, off, V)]
    for q in range(n_mod):
        if k0 <= mod_tok[q] < k0 + m:
            eb[mod_tok[q] - k0] = math.exp(mod_logit[q] - c)
    kern.green_into(wctx, tokmix[k0 : k0 + m], thr, gb[:m])
    return m


@njit(cache=True, inline="always")
def _colour(want_green, green_mass, red_mass):
    """The colour to draw, kept unless it has no mass at all (G rounded just below 1 or above 0)."""
    if want_green:
        return green_mass > 0.0 or red_mass <= 0.0
    return red_mass <= 0.0 and green_mass > 0.0


@njit(cache=True)
def _draw(want, blk_mass, u, dist):
    """Inverse-CDF draw of a token of colour ``want`` (1.0 green, 0.0 red, -1.0 any; see
    :func:`sims.watermarks._kernels.sample_colour`).  ``dist`` is the step's
    ``(tabulated, e, green, wctx, threshold, tokmix, row, lm_state, mod_tok, mod_logit)``; on the
    tabulated path only the chosen block of ``e`` and the green list is built, in ``e``, ``green``."""
    tabulated, e, green, wctx, thr, tokmix, row, lm_state, mod_tok, mod_logit = dist
    if not tabulated:
        return kern.sample_colour(e, green, want, blk_mass, u)
    b, rest = kern.pick_block(blk_mass, u)
    m = _tabulated_block(b, wctx, thr, tokmix, row, lm_state, mod_tok, mod_logit, e, green)
    return b * kern.BLOCK + kern.scan_block(e[:m], green[:m], want, rest)


@njit(cache=True, inline="always")
def _boost_step(d, boost_red, G, masses, u, u2, dist):
    """A soft boost ``d`` of the green list (Algorithm kirchen with delta_t = d), or of the red list
    when ``boost_red`` (Algorithm DualGA_autocov after a green token): the exact
    :math:`D_{kl}(q_t\\|p_t)` and signed :math:`\\mathrm{DG}_t = q_{G,t} - G_t` from
    :mod:`theory._scalar`, then the colour (green with probability :math:`q_{G,t}`, lane ``u2``)
    and the token within it (lane ``u``).  ``masses = (Gs, Rs, blk_green, blk_red)``.
    Returns ``(y, kl, dg)``."""
    Gs, Rs, blk_green, blk_red = masses
    if boost_red:  # the same closed forms with G -> 1 - G
        kl = _scalar.kl(d, 1.0 - G)
        dg = -_scalar.dg(d, 1.0 - G)
    else:
        dg = _scalar.dg(d, G)
        kl = _scalar.kl_given_dg(d, G, dg)
    want = _colour(u2 < G + dg, Gs, Rs)
    y = _draw(1.0 if want else 0.0, blk_green if want else blk_red, u, dist)
    return y, kl, dg


@njit(cache=True, inline="always")
def _morph_step(kappa, p0, G, masses, u, u2, dist):
    """MorphMark (:mod:`sims.watermarks.morphmark`): the strength r of the green mass G, the exact
    :math:`D_{kl}(q_t\\|p_t)` and :math:`\\mathrm{DG}_t = r(1 - G)`, then the colour (green with probability
    :math:`q_{G,t} = G + r(1 - G)`, lane ``u2``) and the token within it, in proportion to p (lane ``u``).
    ``masses = (Gs, Rs, blk_green, blk_red)``.  Returns ``(y, kl, dg)``."""
    Gs, Rs, blk_green, blk_red = masses
    qG, kl, dg = morphmark.records(morphmark.strength(G, kappa, p0), G)
    want = _colour(u2 < qG, Gs, Rs)
    y = _draw(1.0 if want else 0.0, blk_green if want else blk_red, u, dist)
    return y, kl, dg


@njit(cache=True, inline="always")
def _hard_step(G, blk_green, u, dist):
    """The hard red list (delta = inf), G > 0: a draw from p restricted to green; KL = -log G,
    DG = 1 - G.  Returns ``(y, kl, dg)``."""
    y = _draw(1.0, blk_green, u, dist)
    return y, -math.log(G), 1.0 - G


@njit(cache=True, inline="always")
def _ems_step(tau, ems_hash, logits, c, e, tokmix, scratch, scratch2):
    """Exponential minimum sampling: :math:`y = \\arg\\max_k \\log(r_k) / p_{\\tau,k}`, r_k the keyed
    uniforms of the context (stream EMS).  Returns y."""
    if tau != 1.0:
        for k in range(tokmix.shape[0]):
            scratch[k] = (logits[k] - c) / tau
        kern.exp_shifted_into(scratch, 0.0, scratch)
        return kern.ems_draw(ems_hash, tokmix, scratch, scratch2)
    return kern.ems_draw(ems_hash, tokmix, e, scratch)


@njit(cache=True, inline="always")
def _keyed_order_step(algo, target, reverse, perm, e, inv, green, G):
    """ITS, UW-delta and UW-gamma: walk the keyed vocabulary order (reversed when ``reverse``) to the
    token where the cumulative mass passes ``target``.  UW-gamma keeps q = 0 below the midpoint
    of the keyed CDF and 2 p above it, so only the token straddling it has q / p other than 2
    (its KL and DG without a log per token).  Returns ``(y, kl, dg)``; kl, dg are 0 except for
    UW-gamma (the point masses' follow from y)."""
    V = perm.shape[0]
    acc = 0.0
    y = -1
    above = 0.0
    above_green = 0.0
    q_mid = 0.0
    p_mid = 1.0
    green_mid = 0.0
    gamma_reweight = algo == UW_GAMMA
    for j in range(V):
        k = perm[V - 1 - j] if reverse else perm[j]
        pk = e[k] * inv
        prev = acc
        acc += pk
        if gamma_reweight:
            if prev >= 0.5:
                above += pk
                above_green += pk * green[k]
            elif acc > 0.5:
                q_mid = 2.0 * (acc - 0.5)
                p_mid = pk
                green_mid = green[k]
        if y < 0 and acc >= target:
            y = k
            if not gamma_reweight:
                break
    if y < 0:
        y = perm[0] if reverse else perm[V - 1]
    if not gamma_reweight:
        return y, 0.0, 0.0
    kl = 2.0 * above * math.log(2.0) + (q_mid * math.log(q_mid / p_mid) if q_mid > 0.0 else 0.0)
    return y, kl, 2.0 * above_green + q_mid * green_mid - G


@njit(cache=True, parallel=True)
def _generate(algo, lm, keying, prm, prompts, T, seed, row0, out):
    """Every text (row of ``prompts``; row i is text ``row0 + i`` of the run) in parallel, T steps each, algorithm
    code ``algo``.

    Per step: p_t's green mass, normaliser and entropy (tabulated or materialised, module
    docstring), the counter-stream uniforms (lanes 2t, 2t+1 of stream (seed, i)), the
    algorithm's step function, and the dual update (:mod:`theory._scalar`).  ``lm`` is an
    :class:`LMTables`, ``keying`` a :class:`Keying`, ``prm`` an :class:`AlgoParams`; ``out`` =
    (tokens, kl, G, dg, entropy, lam) arrays (n, T), written in place.
    """
    V, order, lm_seed, lm_params, levels, base, table, level_sums = lm
    key, h, thr, partition, n_green, tokmix, perm, siphash, k0, k1, seeding, anchors, clusters = keying
    tokens, kl_out, G_out, dg_out, ent_out, lam_out = out
    n, P = prompts.shape
    its_key = rng.stream_key_nb(key, ITS_STREAM)
    nb = kern.n_blocks(V)
    self_hash = seeding == seeding_mod.SELFHASH  # a green list per candidate: built over V
    tabulated = _tabulated(algo, partition) and not siphash and not self_hash  # the fused tables hash with SplitMix64
    for i in prange(n):
        ctx = np.empty(P + T, dtype=np.int64)
        ctx[:P] = prompts[i]
        size = kern.BLOCK if tabulated else V
        logits = np.empty(size)
        e = np.empty(size)  # exp(logits - c): p times the normaliser s (one block if tabulated)
        green = np.empty(size)  # 1.0 green, 0.0 red
        bits = np.empty(size, dtype=np.uint64)
        sip_state = np.empty(prf_crypto.STATE_WORDS, dtype=np.uint64)
        wa = np.empty(h, dtype=np.uint64)  # selfhash's window hashes
        scratch = np.empty(size)  # EMS's, PF's and GumbelSoft's work arrays
        scratch2 = np.empty(size)
        mod_tok = np.empty(lm_mod.N_BUMPS, dtype=np.int64)
        mod_logit = np.empty(lm_mod.N_BUMPS)
        blk_green = np.empty(nb)
        blk_red = np.empty(nb)
        blk_all = np.empty(nb)
        skey = rng.stream_key_nb(seed, row0 + i)
        lam = prm.lam1
        prev_green = False  # Algorithm DualGA_autocov colours y_0 red
        for t in range(T):
            L = P + t
            window = ctx[L - h : L]
            wctx = prf.context_hash_nb(key, window, prf.GREEN) if seeding == seeding_mod.LEFTHASH else seeding_mod.seed_hash_nb(key, window, seeding, clusters)
            if tabulated:
                lm_state = lm_mod.context_into(V, order, lm_seed, lm_params, levels, base, ctx[:L], mod_tok, mod_logit)
                c = lm_state[3]
                row = table[lm_state[0]]
                acc = _tabulated_masses(wctx, thr, tokmix, table, level_sums, levels, base, lm_state, mod_tok, mod_logit,
                                        blk_green, blk_red)
            else:
                c = lm_mod.logits_into(V, order, lm_seed, lm_params, levels, base, ctx[:L], logits)
                lm_state = (0, 0, 0, c)
                row = table[0]
                kern.exp_shifted_into(logits, c, e)
                if siphash:
                    _siphash_green_list(k0, k1, window, thr, sip_state, green)
                elif self_hash:
                    seeding_mod.window_hashes_into(key, window, wa)
                    seeding_mod.self_green_into(wa, anchors, tokmix, thr, green)
                else:
                    _green_list(wctx, thr, partition, n_green, tokmix, bits, green)
                acc = kern.block_masses(e, logits, c, green, blk_green, blk_red)
            Gs = 0.0
            Rs = 0.0
            s = 0.0
            for b in range(nb):
                Gs += blk_green[b]
                Rs += blk_red[b]
                blk_all[b] = blk_green[b] + blk_red[b]
                s += blk_all[b]
            inv = 1.0 / s
            ent = math.log(s) - acc * inv  # H(p) = log s - sum_k p_k (l_k - c)
            G = min(Gs * inv, 1.0)
            u = rng.uniform_nb(skey, 2 * t)
            u2 = rng.uniform_nb(skey, 2 * t + 1)
            dist = (tabulated, e, green, wctx, thr, tokmix, row, lm_state, mod_tok, mod_logit)
            masses = (Gs, Rs, blk_green, blk_red)
            kl = 0.0
            dg = 0.0
            lam_rec = np.nan
            if algo == NONE or (algo == HARD and G <= 0.0):  # hard with an empty green mass: unwatermarked
                y = _draw(-1.0, blk_all, u, dist)
            elif algo == SRL or algo == UNIGRAM:  # Unigram: SRL at context width 0 (its record's context_width)
                y, kl, dg = _boost_step(prm.delta, False, G, masses, u, u2, dist)
            elif algo == ATW or algo == SWEET:  # SWEET generates by ATW's rule
                y, kl, dg = _boost_step(prm.delta if ent > prm.alpha else 0.0, False, G, masses, u, u2, dist)
            elif algo == MORPHMARK:
                y, kl, dg = _morph_step(prm.morph_kappa, prm.morph_p0, G, masses, u, u2, dist)
            elif algo == DUALGA:
                lam_rec = lam
                y, kl, dg = _boost_step(lam, False, G, masses, u, u2, dist)
                lam = _scalar.dualga_update(lam, dg, prm.Delta, prm.eta, prm.M)
            elif algo == AUTOCOV:  # boost the red list after a green token
                lam_rec = lam
                y, kl, dg = _boost_step(lam, prev_green, G, masses, u, u2, dist)
                lam = _scalar.autocov_update(lam, dg, prev_green, prm.gamma, prm.Delta, prm.eta, prm.M)
            elif algo == HARD:
                y, kl, dg = _hard_step(G, blk_green, u, dist)
            elif algo == DIPMARK:  # the partition list's words in bits (its record's green_kind)
                y, kl, dg = dipmark.dip_step(prm.dip_alpha, e, inv, bits, green, u, G, scratch)
            elif algo == EMS:
                y = _ems_step(prm.tau, prf.context_hash_nb(key, window, prf.EMS), logits, c, e, tokmix, scratch, scratch2)
            elif algo == EXP:  # the key vector of position t mod n in place of the context's
                y = _ems_step(prm.tau, keys.position_hash_nb(key, t, np.int64(prm.exp_n)), logits, c, e, tokmix, scratch, scratch2)
            elif algo == PF:
                y = pf.pf_step(prm.tau, prf.context_hash_nb(key, window, prf.EMS), logits, c, tokmix, scratch)
            elif algo == GUMBELSOFT:
                y, kl, dg = gumbelsoft.gumbelsoft_step(prm.gs_tau, prf.context_hash_nb(key, window, prf.EMS), logits, c, inv, green, G, u,
                                                       tokmix, scratch, scratch2)
            else:
                sctx = prf.context_hash_nb(key, window, prf.STEP)
                if algo == ITS:
                    target = rng.uniform_nb(its_key, t)
                elif algo == UW_DELTA:
                    target = prf.uniform_nb(sctx, V)
                else:
                    target = 0.5 * (1.0 + u)
                reverse = algo == UW_GAMMA and prf.uniform_nb(sctx, V + 1) < 0.5
                y, kl, dg = _keyed_order_step(algo, target, reverse, perm, e, inv, green, G)
            if algo == EMS or algo == ITS or algo == UW_DELTA or algo == PF or algo == EXP:  # a point mass at y
                kl = -math.log(e[y] * inv)
                dg = green[y] - G
            tokens[i, t] = y
            kl_out[i, t] = kl
            G_out[i, t] = G
            dg_out[i, t] = dg
            ent_out[i, t] = ent
            lam_out[i, t] = lam_rec
            prev_green = prf.is_green_nb(wctx, y, thr) if tabulated else green[y] > 0.0
            ctx[L] = y


def algo_params(algo: str, **given) -> tuple[AlgoParams, dict]:
    """Validate an algorithm's parameters and apply the documented defaults (:func:`sims.watermarks.registry.resolve_params`).

    Returns the kernel's :class:`AlgoParams` and every parameter as a dict (what the record's
    ``meta`` keeps; ``delta`` and ``Delta`` are ``None`` where the algorithm has no such parameter).

    Parameters
    ----------
    algo : str
        A registered algorithm name.
    **given
        Parameter values by keyword (None: the default).

    Returns
    -------
    AlgoParams
        Every parameter as a float, 0.0 where None.
    dict
        Every parameter as resolved (:func:`sims.watermarks.registry.resolve_params`).
    """
    info = registry.resolve_params(algo, **given)
    prm = AlgoParams(*(float(0.0 if info.get(f) is None else info[f]) for f in AlgoParams._fields))  # dip_alpha, morph_*, gs_tau: one record's each
    return prm, info


def generate_synthetic(
    lm: SyntheticLM, algo: str, *, n: int, T: int, seed: int, key: int, gamma=None, delta=None, Delta=None,
    eta=None, lam1=None, tau=None, alpha=None, h: int = defaults.H,
    green_kind: str = defaults.GREEN_KIND, prompts: np.ndarray | None = None, prompt_len: int = 16, M=None,
    prf: str = defaults.PRF, m=None, candidates=None, mask_repeated=None, seeding: str = seeding_mod.DEFAULT, dip_alpha=None,
    morph_kappa=None, morph_p0=None, gs_tau=None, exp_n=None,
) -> Generation:
    """Generate ``n`` texts of ``T`` tokens with watermark ``algo`` and exact per-token records.

    Parameters
    ----------
    lm : SyntheticLM
    algo : one of ``ALGOS`` (:mod:`sims.watermarks.registry`)
    n, T : int
        Number of texts and tokens per text.
    seed : int
        Sampling seed (text i uses counter stream (seed, i)); prompts use it too.
    key : int or bytes
        Watermark key in [0, 2**64); for ``prf="siphash"`` an int in [0, 2**128) or 16 bytes.
    gamma, delta, Delta, eta, lam1, tau, alpha :
        The paper's parameters (defaults: :data:`sims.watermarks.registry.PARAMS`); one that
        ``algo`` does not take, given, is refused (:func:`sims.watermarks.registry.check_params`).
    h : int
        Context width of the green-list hash (>= 0; 0: one fixed green list, Zhao et al.'s Unigram; a record with a
        fixed ``context_width`` runs at it, :func:`sims.watermarks.registry.context_width`).
    green_kind : {"bernoulli", "partition"}
        See :mod:`sims.core.prf`.
    M : float
        Projection bound of DualGA's lambda (the paper truncates at 15); a lower cap is the
        repetition mitigation measured in :mod:`sims.experiments.repetition`.
    prompts : ndarray (n, P), optional
        Prompt token ids; default :func:`sample_prompts` ``(lm, n, seed, prompt_len)``.
    prompt_len : int
        Length P of the sampled prompts where ``prompts`` is None (at least ``max(lm.order, h)``).
    prf : {"splitmix64", "siphash"}
        The keyed PRF of the green lists: SplitMix64 (:mod:`sims.core.prf`, the default) or
        SipHash-2-4 with a 128-bit key (:mod:`sims.core.prf_crypto`; Bernoulli lists of the
        red-green schemes ``SIPHASH_ALGOS``, generated on the materialised path).  The record's
        ``meta`` keeps ``prf`` and the key (as an int) so that :func:`sims.detect.families.detectors.score`
        detects with the same.
    dip_alpha :
        DiPmark's reweight alpha in [0, 1/2] (:mod:`sims.watermarks.dipmark`).
    morph_kappa, morph_p0 :
        MorphMark's strength constant kappa in (0, inf) and threshold p0 in [0, 1] (:mod:`sims.watermarks.morphmark`).
    gs_tau :
        GumbelSoft's softmax temperature in (0, inf) (:mod:`sims.watermarks.gumbelsoft`).
    exp_n :
        EXP's key-sequence length n (an integer >= 1, default 256): step t reads xi_{t mod n}.
    m, candidates, mask_repeated :
        Tournament sampling's (``algo="synthid"``): layers, candidates per match (2: non-distortionary)
        and the repeated-context mask; generated by the record's own ``generator``.
    seeding : {"lefthash", "selfhash", "minhash", "skipgram", "semantic"}
        How the green list is seeded from the last ``h`` tokens (and, for ``selfhash``, the candidate); a
        ``semantic`` carrying a cluster table (:func:`sims.core.seeding.with_clusters`) seeds by those clusters
        and records the table's name in ``meta["clusters"]``:
        :mod:`sims.core.seeding`; the red-green algorithms of :func:`sims.watermarks.registry.check_seeding`,
        Bernoulli lists keyed by SplitMix64.  ``meta`` keeps it where it is not ``"lefthash"``.

    Returns
    -------
    Generation
        Texts and exact per-token KL, G, DG, entropy and lambda.

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Algorithm 1 (alg:kirchen, soft red list), Algorithm 2 (alg:DualGA), Algorithm 3
    (alg:DualGA_autocov) and Example 3.6 (eg:ems, EMS / inverse-transform sampling).

    Examples
    --------
    >>> import sims
    >>> lm = sims.get_lm("tiny")
    >>> gen = sims.generate(lm, "srl", n=2, T=20, seed=0, key=42, gamma=0.25, delta=2.0, prompt_len=4)
    >>> gen.tokens.shape, round(float(gen.kl.mean()), 4)
    ((2, 20), 0.4291)
    """
    rec = registry.get(algo)
    seed_code = registry.check_seeding(algo, seeding, green_kind=green_kind, prf=prf)
    if rec.generator is not None:
        return _own_generator(rec, lm, n=n, T=T, seed=seed, key=key, h=h, green_kind=green_kind, prf=prf, prompts=prompts, prompt_len=prompt_len,
                              given=dict(gamma=gamma, delta=delta, Delta=Delta, eta=eta, lam1=lam1, tau=tau, alpha=alpha, M=M, m=m,
                                         candidates=candidates, mask_repeated=mask_repeated, dip_alpha=dip_alpha,
                                         morph_kappa=morph_kappa, morph_p0=morph_p0, gs_tau=gs_tau, exp_n=exp_n))
    registry.check_params(algo, m=m, candidates=candidates, mask_repeated=mask_repeated)
    if rec.code not in STEPS:
        raise ValueError(f"algo {algo!r} has no step in the Numba generator; it runs on {registry.get(algo).backends}")
    if int(n) < 1 or int(T) < 1:
        raise ValueError(f"n and T must be in [1, inf); got n={n}, T={T}")
    h = registry.context_width(algo, h)
    green_kind = registry.fixed_green_kind(algo, green_kind)
    if int(h) < 0:
        raise ValueError(f"h must be in [0, inf); got {h!r}")
    if int(h) == 0 and (green_kind != "bernoulli" or seed_code != seeding_mod.LEFTHASH):
        raise ValueError(f"h = 0 (one green list for every context) takes Bernoulli lefthash green lists: partition lists make the colours "
                         f"of distinct tokens hypergeometric, not binomial; got green_kind={green_kind!r}, seeding={seeding!r}")
    siphash = prf == "siphash"
    if siphash:
        k0, k1 = prf_crypto.key_words(key)
        if algo not in SIPHASH_ALGOS or green_kind != "bernoulli":
            raise ValueError(f"prf='siphash' keys the Bernoulli green lists of {SIPHASH_ALGOS}; got algo={algo!r}, green_kind={green_kind!r}")
        key = k0 | (k1 << 64)  # the 16 key bytes read little-endian: what meta stores
    elif prf != "splitmix64":
        raise ValueError(f"prf must be 'splitmix64' or 'siphash'; got {prf!r}")
    elif isinstance(key, (bytes, bytearray)) or not (0 <= int(key) < 2**64):
        raise ValueError(f"key must be in [0, 2**64) (an int, for prf='splitmix64'); got {key!r}")
    else:
        k0 = k1 = 0
    if green_kind not in ("bernoulli", "partition"):
        raise ValueError(f"green_kind must be 'bernoulli' or 'partition'; got {green_kind!r}")
    given = dict(gamma=gamma, delta=delta, Delta=Delta, eta=eta, lam1=lam1, tau=tau, alpha=alpha, M=M, dip_alpha=dip_alpha,
                 morph_kappa=morph_kappa, morph_p0=morph_p0, gs_tau=gs_tau, exp_n=exp_n)
    registry.check_params(algo, **given)
    M = registry.PARAMS["M"].check(defaults.M if M is None else M)
    prm, info = algo_params(algo, **{**given, "lam1": None if lam1 is None else min(lam1, M), "M": M})
    V = lm.vocab_size
    if prompts is None:
        prompts = sample_prompts(lm, n, seed, prompt_len)
    prompts = np.ascontiguousarray(prompts, dtype=np.int64)
    if prompts.ndim != 2 or prompts.shape[0] != n or prompts.shape[1] < max(lm.order, h):
        raise ValueError(f"prompts must have shape (n={n}, P >= {max(lm.order, h)}); got {prompts.shape}")
    if prompts.min() < 0 or prompts.max() >= V:
        raise ValueError(f"prompt token ids must be in [0, {V - 1}]")
    gam = info["gamma"]
    tables = LMTables(V, lm.order, lm.seed, lm.params, lm.levels, lm.base, lm.table, lm.level_sums)
    key64 = k0 if siphash else int(key)  # SplitMix64's key (unused by the SipHash-keyed schemes)
    anchors = seeding_mod.token_hashes(key64, np.arange(V)) if seed_code == seeding_mod.SELFHASH else np.zeros(0, dtype=np.uint64)
    clusters = seeding_mod.cluster_table(seeding)
    if clusters.size and clusters.size < V:
        raise ValueError(f"seeding's cluster table must hold a cluster for each of the {V} ids; got {clusters.size}")
    keying = Keying(np.uint64(key64), int(h), green_threshold(gam), green_kind == "partition", max(1, int(math.floor(gam * V))),
                    token_mix(V), keyed_order(key64, V), siphash, np.uint64(k0), np.uint64(k1), seed_code, anchors, clusters)
    out = (np.empty((n, T), dtype=np.int64),) + tuple(np.empty((n, T)) for _ in range(5))
    code = registry.get(algo).code
    in_chunks(lambda i0, i1: _generate(code, tables, keying, prm, prompts[i0:i1], int(T), int(seed), i0, tuple(o[i0:i1] for o in out)),
              n, T, f"{lm.name}/{algo}")
    meta = dict(lm=lm.name, vocab_size=V, lm_seed=lm.seed, algo=algo, key=int(key), seed=int(seed), h=int(h), green_kind=green_kind, **info)
    if siphash:
        meta["prf"] = "siphash"
    if seed_code != seeding_mod.LEFTHASH:
        meta["seeding"] = str(seeding)
    if clusters.size:
        meta["clusters"] = seeding_mod.store_clusters(clusters)
    return Generation(out[0], prompts, out[1], out[2], out[3], out[4], out[5], meta)


def _own_generator(rec, lm, *, n, T, seed, key, h, green_kind, prf, prompts, prompt_len, given) -> Generation:
    """An algorithm with its own generator (registry ``generator``): the common options checked, its parameters resolved."""
    if green_kind != defaults.GREEN_KIND or prf != defaults.PRF:
        raise ValueError(f"algo {rec.name!r} has no green list: green_kind and prf must be the defaults; got {green_kind!r}, {prf!r}")
    if given["gamma"] is not None:
        raise ValueError(f"algo {rec.name!r} has no green list and takes no parameter 'gamma' (got gamma={given['gamma']!r})")
    registry.check_params(rec.name, **given)
    prm = registry.resolve_params(rec.name, **given)
    return rec.generator(lm, n=n, T=T, seed=seed, key=key, h=h, prompts=prompts, prompt_len=prompt_len, prm=prm)


def uniform_start(lm: SyntheticLM, n: int, seed: int, length: int) -> np.ndarray:
    """The first ``lm.order`` tokens of :func:`sample_prompts`' prompts, uniform from
    ``numpy.random.default_rng(seed)`` (both samplers start so), after checking ``n`` and ``length``.

    Parameters
    ----------
    lm : SyntheticLM
        The LM (its ``order`` and ``vocab_size``).
    n : int
        Number of prompts, at least 1.
    seed : int
        Sampling seed.
    length : int
        The prompts' length, at least ``lm.order``.

    Returns
    -------
    numpy.ndarray of int64, shape (n, lm.order)
        Uniform token ids.
    """
    if int(n) < 1 or int(length) < lm.order:
        raise ValueError(f"n must be >= 1 and length >= order={lm.order}; got n={n}, length={length}")
    return np.random.default_rng(seed).integers(0, lm.vocab_size, size=(n, lm.order))


def sample_prompts(lm: SyntheticLM, n: int, seed: int, length: int = 16) -> np.ndarray:
    """``n`` prompts of ``length`` tokens sampled from ``lm`` itself after a uniform first ``lm.order`` tokens.

    Parameters
    ----------
    lm : SyntheticLM
    n : int
        Number of prompts.
    seed : int
        Sampling seed.
    length : int
        Tokens per prompt.

    Returns
    -------
    ndarray (n, length) of int64

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Section 4 and App. F (subapx:data_construct): texts continue prompts.

    Examples
    --------
    >>> import sims
    >>> sims.sample_prompts(sims.get_lm("tiny"), 2, seed=0, length=4).shape
    (2, 4)
    """
    first = uniform_start(lm, n, seed, length)
    if int(length) == lm.order:  # nothing to sample after the uniform start
        return first
    gen = generate_synthetic(lm, "none", n=n, T=length - lm.order, seed=seed, key=0, prompts=first)
    return np.concatenate([first, gen.tokens], axis=1)
