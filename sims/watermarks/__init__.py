"""Watermarked generation on the synthetic LMs: every algorithm of the paper, exact per-token records."""
