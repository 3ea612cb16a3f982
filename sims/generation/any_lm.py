"""Watermarked texts from any LM: :func:`generate` draws them from a synthetic LM (the Numba
generator of :mod:`sims.watermarks.generate`, exact records) or a real one (the batched torch engine,
:func:`sims.torch_backend.real_lm.generate_texts`, imported only then), as one
:class:`~sims.core.record.Generation`.  The LM is any that :func:`sims.get_lm` opens; this is
:func:`sims.generate`.
"""

from __future__ import annotations

from sims.core import defaults
from sims.core import seeding as seeding_mod
from sims.core.record import Generation
from sims.lm.door import DEFAULT_PROMPTS, get_lm
from sims.watermarks.generate import generate_synthetic

PROMPT_LEN = 16  #: a synthetic LM's sampled prompt length when none is given


def generate(lm, algo: str, *, n: int = 100, T: int = 200, seed: int = 0, key: int = defaults.KEY, h: int = defaults.H, prompts=None,
             prompt_len: int | None = None, batch: int | None = None, engine: str = "loop", stop_at_eos: bool = False,
             show: bool | None = None, **params) -> Generation:
    """``n`` texts of ``T`` tokens of ``lm`` (any LM :func:`sims.get_lm` opens) with watermark ``algo``
    and exact per-token records.

    Parameters
    ----------
    lm : str, LM or SyntheticLM
        Any LM (:func:`sims.get_lm`).
    algo : str
        One of :data:`sims.ALGOS` (:mod:`sims.watermarks.registry`).
    n, T : int
        Texts and tokens per text (``sims generate``'s 100 and 200).
    seed, key : int
        Text i draws from the counter stream (seed, i); ``key`` is the watermark key (``sims generate``'s
        defaults: 0 and ``defaults.KEY``).
    h, **params :
        The context width and the algorithm's parameters (gamma, delta, Delta, eta, lam1, tau, alpha,
        M, m, ..., ``green_kind``, ``prf``, ``seeding``), as :func:`sims.watermarks.generate.generate_synthetic`.
    prompts : optional
        A synthetic LM: an (n, P) id array (default ``n`` prompts of ``prompt_len`` tokens sampled
        from the LM, :func:`sims.sample_prompts`); a real LM: a prompt set (``lfqa``, the default,
        ``news`` or a JSONL file; random ids for the random test models) or a list of id sequences.
    prompt_len : int, optional
        A synthetic LM's sampled prompt length (default 16).
    batch, engine, stop_at_eos, show :
        A real LM's batching, engine (``loop`` or ``static``), end at the first end token, and
        progress bar (:func:`sims.torch_backend.real_lm.generate_texts`).

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
    lm = get_lm(lm)
    if not lm.real:
        given = dict(batch=batch, engine=None if engine == "loop" else engine, stop_at_eos=stop_at_eos or None, show=show)
        bad = {k: v for k, v in given.items() if v is not None}
        if bad:
            raise ValueError(f"{', '.join(bad)} apply to real LMs (the torch backend; a synthetic LM has no end token and no "
                             f"batches); synthetic LM {lm.name!r} got {bad}")
        if isinstance(prompts, str):
            raise ValueError(f"prompts of synthetic LM {lm.name!r} must be an (n, P) id array or None; got {prompts!r}")
        return generate_synthetic(lm.synthetic, algo, n=n, T=T, seed=seed, key=key, h=h, prompts=prompts,
                                  prompt_len=PROMPT_LEN if prompt_len is None else prompt_len, **params)
    if prompt_len is not None:
        raise ValueError(f"prompt_len applies to synthetic LMs (a real LM's prompts come from its prompt set); got {prompt_len!r}")
    from sims.lm.real.model import stop_ids
    from sims.torch_backend.real_lm import generate_texts

    model, tok, V = lm.model, lm.tokenizer, lm.vocab_size
    rows = lm.prompt_ids(DEFAULT_PROMPTS if prompts is None else prompts, n, seed=seed) if prompts is None or isinstance(prompts, str) \
        else list(prompts)
    stops = stop_ids(model, tok) if stop_at_eos else ()
    if params.get("seeding") == "semantic" and not seeding_mod.cluster_table(params["seeding"]).size:  # the LM's own clusters
        params["seeding"] = seeding_mod.with_clusters("semantic", lm.cluster_table())
    return generate_texts(model, rows, T, algo, seed=seed, key=key, h=h, batch=batch, engine=engine, vocab_size=V, lm=lm.name,
                          show=show, stop_ids=stops, **params)
