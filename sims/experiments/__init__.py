"""Experiments on generated texts: evaluate (TPR at fixed FPR, KL, DG), attacks, repetition, a fitted LM beside its real LM."""
