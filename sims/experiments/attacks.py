"""Watermark-removal attacks on saved texts (paper, "Robustness under Attacks" and its appendix).

Texts are rows of token ids padded with -1 at the end (deletion shortens them,
insertion lengthens them).  Every attack takes a rate in [0, 1] (the share of the
original tokens affected), a seed, and returns a new :class:`~sims.watermarks.generate.Generation`
whose ``meta["attacks"]`` records what was done.  Records (KL, G, ...) of attacked
texts are not meaningful and are set to nan.

=================  ================================================================
``deletion``       delete random tokens (Kuditipudi et al.)
``insertion``      insert uniformly random tokens at random places
``substitution``   replace random tokens by uniformly random tokens
``synonym``        replace random tokens by a uniformly random token of the same cluster
                   (:func:`sims.core.seeding.clusters`: the synthetic LMs' stand-in for synonyms, which
                   the ``semantic`` seeding maps to one embedding; a generation seeded by a real LM's own
                   embedding clusters, ``meta["clusters"]``, is attacked within those)
``entropy``        replace the highest-entropy positions by their most probable red token
``color``          oracle with the key: turn green tokens into their most probable red token
``paraphrase``     resample spans of 4 tokens from the unwatermarked LM given the new context
=================  ================================================================

Worst cases of Prop. adv_robust (oracle, used by :mod:`proofs_check`):
``worst_deletion`` deletes green tokens, ``worst_insertion`` inserts a block of red tokens before
the first green token it can turn red (its last token chosen so), ``worst_edit`` turns the substring
of l T tokens red whose greens plus re-colourable successor are the most, the last one chosen so
that the token after the substring turns red too.  The edit and the insertion reach the least
green count of any substring edit or block insertion (exhaustive search on tiny texts, tests).
"""

from __future__ import annotations

import copy
import math

import numpy as np

from sims.core import prf, seeding
from sims.core.record import Generation
from sims.core.windows import last
from sims.experiments._attack_kernels import most_probable_red, partition_green
from sims.lm.synthetic import SyntheticLM

#: The attack kinds on tokens: ``deletion``, ``insertion``, ``substitution`` (uniform edits of a share ``rate`` of the
#: tokens), ``synonym``, ``entropy`` and ``color`` (substitutions that read the LM or the key), ``paraphrase``
#: (spans of :data:`SPAN` tokens drawn again from the LM).
KINDS = ("deletion", "insertion", "substitution", "synonym", "entropy", "color", "paraphrase")
LM_KINDS = ("entropy", "color", "paraphrase")  #: they ask the LM's next-token probabilities
WORST_KINDS = ("worst_deletion", "worst_insertion", "worst_edit")  #: the worst cases of the paper's robustness bounds
#: Tokens per span of the ``paraphrase`` attack: ``ceil(m / SPAN)`` spans are drawn again from the LM for ``m``
#: attacked tokens.
SPAN = 4


def _check(rate: float, kind: str) -> float:
    if kind not in KINDS + WORST_KINDS:
        raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")
    r = float(rate)
    if not (0.0 <= r <= 1.0):
        raise ValueError(f"rate must be in [0, 1]; got {rate!r}")
    return r


def _rows(gen: Generation) -> list[np.ndarray]:
    return [row[row >= 0].copy() for row in gen.tokens]


def _pack(gen: Generation, rows: list[np.ndarray], record: dict) -> Generation:
    width = max(1, max(len(r) for r in rows))
    if any(len(r) == 0 for r in rows):
        raise ValueError("an attacked text is empty (rate too high for its length); lower the rate")
    tok = np.full((len(rows), width), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        tok[i, : len(r)] = r
    nan = np.full(tok.shape, np.nan)
    meta = copy.deepcopy(gen.meta)
    meta.setdefault("attacks", []).append(record)
    return Generation(tok, gen.prompts.copy(), nan, nan.copy(), nan.copy(), nan.copy(), nan.copy(), meta,
                      prompt_lens=gen.prompt_lens.copy(), lengths=np.array([len(r) for r in rows]))


def _green(gen: Generation, context: np.ndarray, tokens) -> np.ndarray:
    """The colour of ``tokens`` after ``context`` under the generation's key, gamma, context width and green lists
    (its seeding scheme, or DiPmark's partition)."""
    m, tokens = gen.meta, np.asarray(tokens, dtype=np.int64)
    w = last(context, m["h"])
    if m.get("green_kind") == "partition":
        return partition_green(m, w, m["vocab_size"])[tokens]
    return prf.is_green(seeding.seeds(m["key"], w, seeding.seeding_of(m), tokens), tokens, m["gamma"])


def _most_probable_red(gen: Generation, lm: SyntheticLM, context: np.ndarray) -> int:
    """The LM's most probable red token after ``context`` (the first maximum; token 0 if all are green)."""
    return most_probable_red(lm.next_probs(context), gen.meta, context)


def attack(gen: Generation, kind: str, rate: float, seed: int = 0, lm: SyntheticLM | None = None) -> Generation:
    """Apply one attack to every text of ``gen`` (see module docstring).

    Parameters
    ----------
    gen : Generation
        The texts.
    kind : str
        The attack (module docstring), e.g. ``"deletion"``.
    rate : float
        Fraction of tokens attacked, in [0, 1].
    seed : int
        Seed of the attack (default 0, as ``sims attack --seed``).
    lm : SyntheticLM or LM, optional
        The LM, for the attacks that read its next-token probabilities (entropy, color, paraphrase); default
        the LM the generation's record names (:func:`sims.lm.door.lm_of`), as ``sims attack`` opens it.

    Returns
    -------
    Generation
        The attacked texts (per-token records nan where unknown).

    References
    ----------
    Towards Better Statistical Understanding of Watermarking LLMs, Prop. B.2 (prop:adv_robust) and the
    robustness experiments of Section 4 (subsec:body_text_robust).

    Examples
    --------
    >>> import sims
    >>> lm = sims.get_lm("tiny")
    >>> gen = sims.generate(lm, "srl", n=2, T=20, seed=0, key=42, gamma=0.25, delta=2.0, prompt_len=4)
    >>> sims.attack(gen, "deletion", 0.1, seed=1).tokens.shape
    (2, 18)
    """
    rate = _check(rate, kind)
    rng = np.random.default_rng(seed)
    V = gen.meta["vocab_size"]
    rows = _rows(gen)
    changed = 0
    if kind in LM_KINDS and lm is None:
        from sims.lm.door import lm_of

        lm = lm_of(gen.meta)
    if kind == "synonym":  # every id's cluster once; the ids of cluster c are by_cluster[starts[c]:starts[c + 1]]
        cluster = seeding.clusters(np.arange(V), seeding.clusters_of(gen.meta))  # a real LM's own embedding clusters where named
        by_cluster = np.argsort(cluster, kind="stable")
        starts = np.searchsorted(cluster[by_cluster], np.arange(seeding.CLUSTERS + 1))
    out = []
    for i, row in enumerate(rows):
        m = int(round(rate * len(row)))
        prompt = gen.prompts[i]
        if kind == "deletion":
            keep = np.ones(len(row), dtype=bool)
            keep[rng.choice(len(row), m, replace=False)] = False
            new = row[keep]
        elif kind == "insertion":
            new = row.copy()
            for _ in range(m):
                new = np.insert(new, rng.integers(0, len(new) + 1), rng.integers(0, V))
        elif kind == "substitution":
            new = row.copy()
            pos = rng.choice(len(row), m, replace=False)
            new[pos] = rng.integers(0, V, size=m)
        elif kind == "synonym":
            new = row.copy()
            pos = rng.choice(len(row), m, replace=False)
            c = cluster[row[pos]]
            new[pos] = by_cluster[starts[c] + (rng.random(m) * (starts[c + 1] - starts[c])).astype(np.int64)]
        elif kind in ("entropy", "color"):
            new = row.copy()
            if kind == "entropy":
                ent = gen.entropy[i, : len(row)]
                pos = set(np.argsort(-ent, kind="stable")[:m].tolist())
            else:
                seq = np.concatenate([prompt, row])
                P = len(prompt)
                green = np.array([_green(gen, seq[: P + t], row[t]) for t in range(len(row))])
                gpos = np.flatnonzero(green)
                pos = set(rng.choice(gpos, min(m, gpos.size), replace=False).tolist())
            for t in sorted(pos):  # left to right: contexts include earlier replacements
                new[t] = _most_probable_red(gen, lm, np.concatenate([prompt, new[:t]]))
        elif kind == "paraphrase":
            new = row.copy()
            n_spans = int(math.ceil(m / SPAN))
            starts = rng.choice(max(1, len(row) - SPAN + 1), min(n_spans, max(1, len(row) - SPAN + 1)), replace=False)
            for s in sorted(starts):
                for t in range(s, min(s + SPAN, len(row))):
                    p = lm.next_probs(np.concatenate([prompt, new[:t]]))
                    new[t] = rng.choice(V, p=p)
        else:
            new = _worst_case(gen, kind, prompt, row, m, V)
        # tokens removed or added, else positions whose token changed
        changed += abs(len(new) - len(row)) if len(new) != len(row) else int(np.sum(new != row))
        out.append(new)
    return _pack(gen, out, dict(kind=kind, rate=rate, seed=int(seed), n_changed=int(changed)))


def _worst_case(gen: Generation, kind: str, prompt: np.ndarray, row: np.ndarray, m: int, V: int) -> np.ndarray:
    """Oracle attacks of Prop. adv_robust's proof (the key is known).

    With h = 1 a change re-colours only the token right after it, so the least green count of
    an edit of one substring of m tokens is reached by turning the substring red and the token
    after it red too (a green one turned, a red one kept) where some red last token allows it: the
    window maximising that gain.  Insertion of a block of m tokens re-colours only the token after
    the block: a red block before the first green token it can turn red (else at the end).  Both are
    checked against exhaustive search on tiny texts (tests/experiments/test_attacks_exhaustive.py).
    """
    P = len(prompt)
    seq = np.concatenate([prompt, row])
    green = np.array([bool(_green(gen, seq[: P + t], row[t])) for t in range(len(row))])
    if kind == "worst_deletion":
        gpos = np.flatnonzero(green)[:m]
        return np.delete(row, gpos)
    if m == 0:
        return row.copy()
    L = len(row)
    if kind == "worst_edit":
        c = np.concatenate([[0], np.cumsum(green)])
        inside = c[m:] - c[: L - m + 1]
        succ = np.append(green[m:], False).astype(np.int64)  # the token after window s, if any
        best, best_gain = None, -1
        for s in np.argsort(-(inside + succ), kind="stable"):
            if inside[s] + succ[s] <= best_gain:
                break
            after = s + m < L  # the successor is re-coloured by the block's last token: kept (or turned) red if possible
            block = _red_block(gen, seq[: P + s], m, V, row[s + m] if after else None)
            gain = int(inside[s]) - block[2] + int(succ[s] and block[1]) - int(after and not green[s + m] and not block[1])
            if gain > best_gain:
                best, best_gain = (int(s), block[0]), gain
        s, block = best
        new = row.copy()
        new[s : s + m] = block
        return new
    # worst_insertion: the block before the first green token it can turn red (else at the end, re-colouring nothing)
    for s in np.flatnonzero(green):
        block, flipped, _ = _red_block(gen, seq[: P + s], m, V, row[s])
        if flipped:
            return np.concatenate([row[:s], block, row[s:]]).astype(np.int64)
    return np.concatenate([row, _red_block(gen, seq, m, V, None)[0]]).astype(np.int64)


def _red_block(gen: Generation, context: np.ndarray, m: int, V: int, successor: int | None) -> tuple[np.ndarray, bool, int]:
    """m tokens after ``context``, each red in its context; with ``successor``, the last chosen so
    that ``successor`` is red after it where any such block exists (h = 1: the block's last token
    is the successor's context).  Returns the block, whether the successor turned red, and how many
    block tokens are green (0 unless a context has no red token)."""
    block = []
    ctx = np.asarray(context)
    n_green = 0
    for j in range(m):
        last = j == m - 1
        tok = _red_token(gen, ctx, V, successor=successor if last else None)
        n_green += int(_green(gen, ctx, tok))
        block.append(tok)
        ctx = np.append(ctx, tok)
    if successor is None and n_green == 0:
        return np.array(block, dtype=np.int64), False, n_green
    if successor is not None and n_green == 0 and not bool(_green(gen, ctx, successor)):
        return np.array(block, dtype=np.int64), True, n_green
    if gen.meta["h"] == 1:  # the greedy block is not the least green: the exact least by dynamic programming
        return _least_green_block(gen, context, m, V, successor)
    if successor is None:
        return np.array(block, dtype=np.int64), False, n_green
    if not bool(_green(gen, ctx, successor)):
        return np.array(block, dtype=np.int64), True, n_green
    if m >= 2:  # the greedy second-to-last token left no red last token that re-colours: search the others
        before = np.asarray(context) if m == 2 else np.append(np.asarray(context), block[:-2])
        for prev in np.flatnonzero(~_green(gen, before, np.arange(V))):
            tok = _red_token(gen, np.append(before, prev), V, successor=successor)
            if not bool(_green(gen, np.append(before, [prev, tok]), successor)) and not bool(_green(gen, np.append(before, prev), tok)):
                return np.array(block[:-2] + [int(prev), tok], dtype=np.int64), True, n_green
    return np.array(block, dtype=np.int64), False, n_green


def _least_green_block(gen: Generation, context: np.ndarray, m: int, V: int, successor: int | None) -> tuple[np.ndarray, bool, int]:
    """:func:`_red_block` exactly, for h = 1 (a token's colour depends on the token before it only): the m
    tokens after ``context`` with the fewest greens, the ``successor`` counted too, by dynamic programming
    over the last token (O(m V^2) colours; ties go to the smaller token ids)."""
    green = np.array([_green(gen, np.array([a]), np.arange(V)) for a in range(V)], dtype=np.int64)  # green[a, b]: b after a
    cost = _green(gen, np.asarray(context), np.arange(V)).astype(np.int64)
    back = []
    for _ in range(m - 1):
        total = cost[:, None] + green  # [previous, next]
        back.append(np.argmin(total, axis=0))
        cost = total.min(axis=0)
    final = cost + (green[:, successor] if successor is not None else 0)
    block = [int(np.argmin(final))]
    for b in reversed(back):
        block.append(int(b[block[-1]]))
    block = block[::-1]
    flipped = successor is not None and not bool(green[block[-1], successor])
    return np.array(block, dtype=np.int64), flipped, int(cost[block[-1]])


def _red_token(gen: Generation, context: np.ndarray, V: int, successor: int | None = None) -> int:
    """The first red token after ``context``; with ``successor``, one under which that token is red too."""
    cand = np.arange(V)
    red = cand[~_green(gen, context, cand)]
    if red.size == 0:  # every token is green here: none can help
        return 0
    if successor is None:
        return int(red[0])
    for c in red:
        if not bool(_green(gen, np.append(context, c), successor)):
            return int(c)
    return int(red[0])
