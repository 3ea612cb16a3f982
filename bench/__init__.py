"""Benchmarks: each ``bench/bench_*.py`` defines ``main(argv=None) -> dict`` that
times ours and the peer in the same process and prints the ratio.
``python -m bench [--only NAME]`` runs them and writes ``bench/results/NAME.json``."""
