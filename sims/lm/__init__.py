"""Synthetic language models with exact next-token distributions (presets, the looping LM, LMs fitted to a real one)."""
