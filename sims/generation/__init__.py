"""Watermarked texts from any LM (:func:`sims.generate`): the synthetic generator or the torch backend, one ``Generation`` record."""
