"""Appendix "Possibility for Other Variants": Z_T is asymptotically N(0, 1) under the null, and
DualGA-AutoCov shifts it."""

from scipy.stats import kstest

from sims import detect
from sims.generate import generate
from sims.lm import get_lm

from ._check import Check

RESULT = "AutoCov (Z_T)"


def run(quick: bool, rng) -> list[Check]:
    n, T, gamma = (2000 if quick else 20000), 400, 0.4
    toks = rng.integers(0, 32000, size=(n, T))
    prom = rng.integers(0, 32000, size=(n, 1))
    Z = detect.score_autocov(toks, prom, 99, gamma, vocab_size=32000).z
    pv = kstest(Z, "norm").pvalue
    lm = get_lm("lfqa", vocab_size=4000)
    g = generate(lm, "autocov", n=16 if quick else 128, T=T, seed=int(rng.integers(2**31)), key=99, gamma=gamma, Delta=0.2)
    Zw = detect.score(g, lm).z
    return [
        Check(RESULT, f"KS p-value of Z_T vs N(0,1) under H0, T={T}", pv, "> 1e-3", "alpha = 1e-3", pv > 1e-3,
              f"{n} key-independent texts (Z_T's normality is asymptotic: T = {T})"),
        Check(RESULT, "mean Z_T of DualGA-AutoCov texts", float(Zw.mean()), "< -3 (shifted)", "< -3", Zw.mean() < -3,
              f"{Zw.size} generated texts, Delta = 0.2"),
    ]
