"""Detection: green counts and scores per text, exact null distributions (binomial, Gamma,
AutoCov, Poisson-binomial tails), Numba kernels."""
