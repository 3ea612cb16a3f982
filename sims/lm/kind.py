"""The one rule that says what an LM name is: which kind, and whether it is real.

Every caller (the CLI, sweeps, paper_figs, :func:`sims.get_lm`) asks :func:`lm_kind`; no other
test of "is this LM real" exists.  Kinds:

* ``preset``: a synthetic preset of :data:`sims.lm.synthetic.PRESETS` (``news``, ``lfqa``, ...);
* ``fitted``: a fitted synthetic LM, the preset ``smollm2-fit`` or a ``.npz`` file written by
  ``python -m sims fit-lm`` (:mod:`sims.lm.fitted`);
* ``loop``: a variant ``loopy-V<V>-p<p>`` of the looping LM (:func:`sims.lm.synthetic.loop_lm`);
* ``smollm2``: SmolLM2-135M-Instruct (the torch backend);
* ``random``: a seeded random-initialised test model (:data:`sims.core.lm_names.RANDOM_LMS`);
* ``folder``: a local transformers folder holding a ``config.json``.

The first three are synthetic (exact next-token distributions, Numba generators); the last
three are real (the torch backend, imported only when such an LM is opened).
"""

from __future__ import annotations

import pathlib
import re

from sims.core.lm_names import RANDOM_LMS
from sims.lm.synthetic import FITTED_PRESETS, LM_PRESETS, PRESETS

#: Kinds of LM with exact next-token distributions computed here: a parametric preset, a fitted ``.npz``, the looping LM.
SYNTHETIC_KINDS = ("preset", "fitted", "loop")
#: Kinds of real (transformer) LM, opened through the torch backend: SmolLM2, a random test model, a local folder.
REAL_KINDS = ("smollm2", "random", "folder")
#: Every kind :func:`lm_kind` may return.
KINDS = SYNTHETIC_KINDS + REAL_KINDS
#: The help text naming what ``--lm`` accepts (one sentence, shared by every command).
LM_CHOICES = ("a synthetic preset (" + ", ".join(LM_PRESETS) + "), a fitted .npz (python -m sims fit-lm), smollm2, a random test model ("
              + ", ".join(RANDOM_LMS) + ") or a local transformers folder")


def lm_kind(name) -> str:
    """The kind of LM ``name`` (one of :data:`KINDS`, see the module docstring).

    Parameters
    ----------
    name : str or os.PathLike
        A preset's name, a fitted preset or ``.npz``, a loopy LM, ``smollm2``, a random test model, or a
        transformers folder.

    Returns
    -------
    str
        One of :data:`KINDS`.

    Raises
    ------
    ValueError
        Naming the value and the choices for anything else (a ``.npz`` path that does not exist, a folder without
        ``config.json``, an unknown name).
    """
    name = str(name)
    if name in PRESETS:
        return "preset"
    if name in FITTED_PRESETS:
        return "fitted"
    if re.fullmatch(r"loopy-V\d+-p.+", name):
        return "loop"
    if name == "smollm2":
        return "smollm2"
    if name in RANDOM_LMS:
        return "random"
    path = pathlib.Path(name)
    if name.endswith(".npz") and path.is_file():
        return "fitted"
    if (path / "config.json").is_file():
        return "folder"
    raise ValueError(f"lm must be one of: {LM_CHOICES}; got {name!r}")


def is_real(name) -> bool:
    """Whether LM ``name`` runs on the torch backend (kind in :data:`REAL_KINDS`); ValueError for an unknown name.

    Parameters
    ----------
    name : str or os.PathLike
        An LM's name or path.

    Returns
    -------
    bool
        True for a real LM.
    """
    return lm_kind(name) in REAL_KINDS
