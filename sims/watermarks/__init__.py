"""Watermarked generation on the synthetic LMs: every algorithm of the paper (one registry record each), exact per-token records."""

from sims.watermarks import tournament  # noqa: F401, E402  (registers SynthID's record in sims.watermarks.registry)
