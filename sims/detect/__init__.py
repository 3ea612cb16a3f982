"""Detection: green counts and scores per text, exact null distributions (binomial, Gamma,
AutoCov, Poisson-binomial tails), Numba kernels; anytime-valid e-processes (``sequential``,
``stream``, ``peeking``), many keys and many texts (``multiple``), the decision document
(``decision``)."""
