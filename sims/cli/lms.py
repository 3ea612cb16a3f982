"""The ``--lm`` option: any LM :func:`sims.get_lm` opens (a synthetic preset, a fitted ``.npz``,
``smollm2``, a random test model or a local transformers folder); which backend runs it is
:func:`sims.lm.kind.lm_kind`'s rule, decided when it is opened."""

from __future__ import annotations

from sims.lm.kind import LM_CHOICES

#: Help text of the ``--lm`` option: the kinds of LM it names (:data:`sims.lm.kind.LM_CHOICES`).
LM_HELP = "LM: " + LM_CHOICES


def open_lm(name: str, dtype: str | None = None):
    """The LM ``name`` (:func:`sims.get_lm`), a real one's weights in ``dtype``.

    Parameters
    ----------
    name : str
        What ``--lm`` names: a synthetic preset, a fitted ``.npz``, ``smollm2``, a random test model or a
        local transformers folder.
    dtype : str or None, optional
        A torch dtype's name (one of :data:`sims.cli.generate.DTYPES`); None: the LM's default (torch is
        then not imported here).

    Returns
    -------
    sims.lm.door.LM
        The opened LM.
    """
    from sims.lm.door import get_lm

    if dtype is None:
        return get_lm(name)
    import torch

    return get_lm(name, dtype=getattr(torch, dtype))
