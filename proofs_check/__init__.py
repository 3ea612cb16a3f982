"""Numerical certificate of the paper's results: one module per result.

Each module ``proofs_check/check_*.py`` defines ``RESULT`` (the paper's label)
and ``run(quick: bool, rng: numpy.random.Generator) -> list[Check]``.
``python -m proofs_check [--quick] [--out DIR]`` runs them all.

Every :class:`~proofs_check._check.Check` computes its quantity independently of the
function under test (a direct sum over full distributions, exact enumeration, CVXPY,
finite differences, the exact binomial law, a separate NumPy replay of the generator)
and states its tolerance and why: a rounding bound, a solver's accuracy, or a test /
confidence interval at a stated level with the seed and sample size.  A module that
raises is reported as a failed check.  Rows whose result ends in ``(finding)``
reproduce a discrepancy with the paper (a counterexample or a slip); they pass when the
counterexample is found, and the corrected statement is checked beside them.

Modules (``--only NAME``): check_adv_robust, check_autocov, check_certainty,
check_free_k_t (with Lemma one_step_k), check_info_lower_bound, check_kl_cvx (with
Example ems), check_kl_decompose, check_lagrangian, check_negative_dlop,
check_theorem_dualga, check_type_errors (with eq. three_brick_p).
"""
