"""Core: the keyed PRF (green lists), counter-based random streams, keyed orders, progress bars.

Nothing here knows about language models or watermarks."""
