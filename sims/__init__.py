"""Simulators: everything that draws or scores tokens.

The rooms of this package, lowest first (a module imports only its own room and those
below it; ``tests/test_imports.py`` checks it)::

    core/          the keyed PRF (green lists), counter RNG, keyed orders, defaults, the Generation record, word sets
    lm/            every LM behind one door (``get_lm``, ``LM``): synthetic LMs with exact next-token distributions (presets, fitted,
                   the looping LM), the real-LM adapter (lm/real/, torch imported only when a real LM is opened); lm.kind names an LM's kind
    watermarks/    generation with every watermark of the paper on a synthetic LM, exact per-token records; the algorithm registry
    detect/        detection, in sub-rooms lowest first: stats/ (per-token statistics, exact null tails, kernels) -> anytime/
                   (e-processes) -> multiple/ (many keys, many texts) -> families/ (one class per detector family and the
                   detectors that ask them) -> documents/ (the JSON decision document, the HTML report, colours of raw texts)
    reduced/       the reduced simulator: G_t processes, online controllers, runner vs hindsight OPT
    plan/          power and sample-size planning (``python -m sims plan``)
    torch_backend/ the same algorithms on a real LM (optional extra ``[torch]``, imported only when a real LM generates)
    generation/    ``sims.generate``: watermarked texts from any LM (the synthetic generator or the torch backend)
    experiments/   evaluate (TPR at fixed FPR, KL, DG), attacks, repetition, a fitted LM beside its real LM
    steal/         watermark stealing: learn green lists from texts, spoof or scrub, and the spoof test
    sweep/         sweeps: a grid of experiments run as Dask tasks, their rows and aggregates
    cli/           ``python -m sims COMMAND``

The names below are the public API (``sims.__all__``); everything else is an implementation
detail.  Importing this package loads neither torch, matplotlib nor cvxpy, and a name's module is
imported on its first use (``python -m sims plan`` loads only what planning needs).
``sims.__version__`` is the installed distribution's version (``wmstats``), read on first use.
"""

import importlib

import theory._numba_cache  # noqa: F401  (first: Numba's cache keyed by the package source)

# Public name -> (module, name there; None: the module itself); the module is imported on first use.
_HOMES = {
    "ALGOS": ("sims.watermarks.generate", "ALGOS"),
    "DetectResult": ("sims.detect.stats.scores", "DetectResult"),
    "Generation": ("sims.core.record", "Generation"),
    "LM": ("sims.lm.door", "LM"),
    "LM_PRESETS": ("sims.lm.synthetic", "LM_PRESETS"),
    "ReducedResult": ("sims.reduced.runner", "ReducedResult"),
    "SyntheticLM": ("sims.lm.synthetic", "SyntheticLM"),
    "attack": ("sims.experiments.text_attacks", "attack"),
    "clopper_pearson": ("sims.experiments.evaluate", "clopper_pearson"),
    "defaults": ("sims.core.defaults", None),
    "evaluate": ("sims.experiments.evaluate", "evaluate"),
    "g_process": ("sims.reduced.gprocess", "parse_spec"),
    "generate": ("sims.generation.any_lm", "generate"),
    "get_lm": ("sims.lm.door", "get_lm"),
    "green_indicators": ("sims.detect.stats.scores", "green_indicators"),
    "keyed_order": ("sims.core.keys", "keyed_order"),
    "lambda_monitor": ("sims.experiments.repetition", "monitor"),
    "lm_from_meta": ("sims.lm.synthetic", "lm_from_meta"),
    "loop_lm": ("sims.lm.synthetic", "loop_lm"),
    "null_fpr": ("sims.experiments.evaluate", "null_fpr"),
    "prefix_log10p": ("sims.detect.stats.scores", "prefix_log10p"),
    "repeated_ngram_mask": ("sims.experiments.repetition", "repeated_ngram_mask"),
    "repetition_rate": ("sims.experiments.repetition", "repetition_rate"),
    "sample_prompts": ("sims.watermarks.generate", "sample_prompts"),
    "score": ("sims.detect.families.detectors", "score"),
    "score_redgreen": ("sims.detect.stats.scores", "score_redgreen"),
    "simulate": ("sims.reduced.runner", "simulate"),
    "tokens_to_detect": ("sims.detect.stats.scores", "tokens_to_detect"),
    "traces": ("sims.reduced.runner", "traces"),
}
__all__ = list(_HOMES)


def _version() -> str:
    """The version of the ``wmstats`` distribution: its installed metadata, else pyproject.toml beside this package."""
    from importlib import metadata

    try:
        return metadata.version("wmstats")
    except metadata.PackageNotFoundError:  # a source checkout that was never installed
        import pathlib
        import tomllib

        pyproject = pathlib.Path(__file__).resolve().parents[1] / "pyproject.toml"
        try:
            return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "0+unknown"


def __getattr__(name: str):
    """A public name of ``sims`` (PEP 562), imported from its module on first use and kept in the package's globals.

    Parameters
    ----------
    name : str
        A name of :data:`__all__` (its home module in ``_HOMES``), or ``__version__`` (read by ``_version``).

    Returns
    -------
    object
        The function, class, constant or module the name stands for.

    Raises
    ------
    AttributeError
        If ``name`` is not a public name of the package.
    """
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'sims' has no attribute {name!r}")
    module = importlib.import_module(home[0])
    value = module if home[1] is None else getattr(module, home[1])
    globals()[name] = value
    return value


def __dir__():
    """The package's names for ``dir(sims)``: its globals, every public name (imported or not) and ``__version__``.

    Returns
    -------
    list of str
        Sorted.
    """
    return sorted(set(globals()) | set(__all__) | {"__version__"})
