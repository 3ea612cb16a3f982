"""Experiments on generated texts: evaluate (TPR at fixed FPR, KL, DG), attacks, repetition."""
