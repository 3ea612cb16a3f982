import sys

from sims.cli.main import main

if __name__ == "__main__":  # guarded: a sweep's local cluster spawns workers that import __main__
    sys.exit(main())
