"""`python -m backend.cli` is `harness`."""

import sys

from backend.cli.main import main

sys.exit(main())
