"""``python -m sc2dask.emulator -listen 127.0.0.1 -port 5000 ...``: what the launcher execs."""

import sys

from .server import main

sys.exit(main())
