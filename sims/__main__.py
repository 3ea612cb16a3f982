import sys

from sims.cli.main import main

sys.exit(main())
