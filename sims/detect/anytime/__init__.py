"""Anytime-valid detection: e-processes valid under any stopping rule, their mixtures and laws, and what peeking at fixed-length tests costs."""
