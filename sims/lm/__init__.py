"""Synthetic language models with exact next-token distributions (presets, the looping LM)."""
