"""``python -m sims``: one module per subcommand (:mod:`sims.cli.main` dispatches)."""
