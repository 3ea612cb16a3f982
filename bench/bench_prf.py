"""Green-list hashing throughput: the default SplitMix64 PRF (:mod:`sims.core.prf`) vs the keyed
SipHash-2-4 PRF (:mod:`sims.core.prf_crypto`), both as Numba kernels, same process.

Two access patterns, as the package uses them:

* generation: the green list of one context over the whole vocabulary (V = 32000 per step;
  the context's hash / SipHash state is computed once per step);
* detection: one token per context (h = 1), context hash and token bits for every token.

Printed: tokens/s of each and the ratio default / SipHash (how many times slower the
cryptographic key makes green-list hashing).  Fastest of 3 runs after one warm-up.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from bench.bench_detect import tokens_per_s
from sims.core import prf, prf_crypto

V = 32000
KEY = 15485863
CRYPTO_KEY = bytes(range(16))


@njit(cache=True, parallel=True)
def _gen_splitmix(key, contexts, tokmix, thr):
    n = contexts.shape[0]
    out = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        c = prf.context_hash_nb(key, contexts[i], prf.GREEN)
        g = 0
        for k in range(tokmix.shape[0]):
            g += (prf.mix64_nb(c ^ tokmix[k]) >> np.uint64(11)) < np.uint64(thr)
        out[i] = g
    return out


@njit(cache=True, parallel=True)
def _gen_siphash(k0, k1, contexts, V, thr):
    n = contexts.shape[0]
    out = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        st = np.empty(prf_crypto.STATE_WORDS, dtype=np.uint64)
        prf_crypto.context_state_nb(k0, k1, contexts[i], prf.GREEN, st)
        g = 0
        for k in range(V):
            g += prf_crypto.is_green_nb(st, k, thr)
        out[i] = g
    return out


@njit(cache=True, parallel=True)
def _det_splitmix(key, seq, thr):
    n = seq.shape[0] - 1
    out = np.zeros(n, dtype=np.bool_)
    for t in prange(n):
        c = prf.context_hash_nb(key, seq[t : t + 1], prf.GREEN)
        out[t] = prf.is_green_nb(c, seq[t + 1], thr)
    return out


@njit(cache=True, parallel=True)
def _det_siphash(k0, k1, seq, thr):
    n = seq.shape[0] - 1
    out = np.zeros(n, dtype=np.bool_)
    for t in prange(n):
        st = np.empty(prf_crypto.STATE_WORDS, dtype=np.uint64)
        prf_crypto.context_state_nb(k0, k1, seq[t : t + 1], prf.GREEN, st)
        out[t] = prf_crypto.is_green_nb(st, seq[t + 1], thr)
    return out


def main(argv=None) -> dict:
    rng = np.random.default_rng(0)
    thr = prf.green_threshold(0.25)
    k0, k1 = (np.uint64(w) for w in prf_crypto.key_words(CRYPTO_KEY))
    contexts = rng.integers(0, V, size=(256, 1))
    seq = rng.integers(0, V, size=2_000_001)
    tokmix = prf.token_mix(V)
    res = dict(
        generation_splitmix_tokens_per_s=tokens_per_s(lambda: _gen_splitmix(np.uint64(KEY), contexts, tokmix, thr), contexts.shape[0] * V),
        generation_siphash_tokens_per_s=tokens_per_s(lambda: _gen_siphash(k0, k1, contexts, V, thr), contexts.shape[0] * V),
        detection_splitmix_tokens_per_s=tokens_per_s(lambda: _det_splitmix(np.uint64(KEY), seq, thr), seq.size - 1),
        detection_siphash_tokens_per_s=tokens_per_s(lambda: _det_siphash(k0, k1, seq, thr), seq.size - 1),
    )
    res["generation_ratio_splitmix_over_siphash"] = res["generation_splitmix_tokens_per_s"] / res["generation_siphash_tokens_per_s"]
    res["detection_ratio_splitmix_over_siphash"] = res["detection_splitmix_tokens_per_s"] / res["detection_siphash_tokens_per_s"]
    for k, v in res.items():
        print(f"   {k:46s} {v:12.4g}")
    return res


if __name__ == "__main__":
    main()
