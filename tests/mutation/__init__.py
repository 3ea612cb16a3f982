"""Mutation testing of the package (``make mutate``): cosmic-ray mutates, a warm fork server runs the tests.

Not collected by pytest (no ``test_*.py`` here) and not part of ``make test``.  See docs/mutation.md.
"""
