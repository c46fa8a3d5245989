"""The ``sc2dask`` command line: train, evaluate, show the settings, run the emulator, demo.

Every setting of ``sc2dask/settings.py`` is a flag of ``train`` (and the evaluate ones of
``evaluate``); a flag left out means "from config". Long commands print the dashboard
links and a progress bar, and send Dask's and TensorFlow's logs to a file
(``--verbose``: to the terminal). Errors a user can cause exit 2 with one line.

One module a job: ``arguments`` (the parser of the flags), ``train`` and ``evaluate`` (the long commands),
``commands`` (the short ones), ``common`` (what they share), ``console`` (the terminal)
and ``flags`` (the settings as flags). ``main`` is here, the console entry point.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ..errors import SC2DaskError
from .arguments import parser

__all__ = ["main", "parser"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; an error a user can cause is one line on stderr and exit 2."""
    args = parser().parse_args(argv)
    # An agent class names a module as `python -m` would find it: from this folder too.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return args.run(args)
    except SC2DaskError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
