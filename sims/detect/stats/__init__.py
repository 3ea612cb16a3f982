"""Per-token statistics of every detector family and their exact null tails (binomial, Gamma, AutoCov, Poisson-binomial), with their private Numba kernels."""
