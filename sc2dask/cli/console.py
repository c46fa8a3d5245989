"""What a long command shows: its own lines and a progress bar, and nothing else.

Dask, TensorFlow, pysc2 and the games write to the process's stdout and stderr, and the
worker processes a local cluster starts inherit both. ``Console`` points those two file
descriptors at a log file for the command's lifetime and keeps private copies of the
terminal for our lines and the progress bar; once it exits, everything (errors included)
goes to the terminal again. With ``verbose`` nothing moves.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

from tqdm import tqdm


class Console:
    """The terminal of one command, with everything else sent to ``log_path``."""

    def __init__(self, command: str, verbose: bool = False, quiet: bool = False):
        self.verbose, self.quiet = verbose, quiet  # quiet: --json, only the last line
        self.log_path: Path | None = None
        self.out, self.err = sys.stdout, sys.stderr
        self._command = command
        self._saved: list[int] = []
        self._log = None
        self._handlers: list[logging.Handler] = []
        self._level = logging.WARNING

    def __enter__(self) -> Console:
        if self.verbose:
            return self
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        self._log = open(self._new_log_path(), "a", buffering=1)
        self._saved = [os.dup(1), os.dup(2)]
        self.out = os.fdopen(os.dup(self._saved[0]), "w", buffering=1)
        self.err = os.fdopen(os.dup(self._saved[1]), "w", buffering=1)
        os.dup2(self._log.fileno(), 1)
        os.dup2(self._log.fileno(), 2)
        root = logging.getLogger()
        self._handlers, self._level = root.handlers[:], root.level
        logging.basicConfig(
            level=logging.INFO,
            stream=sys.stderr,
            force=True,
            format="%(asctime)s %(name)s %(levelname)s %(message)s",
        )
        # Where the rest went, even with --json (stdout stays one JSON object).
        print(
            f"Log:            {self.log_path}",
            file=self.err if self.quiet else self.out,
            flush=True,
        )
        return self

    def __exit__(self, *exc) -> None:
        if not self._saved:
            return
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os.dup2(self._saved[0], 1)
        os.dup2(self._saved[1], 2)
        for fd in self._saved:
            os.close(fd)
        self._saved = []
        root = logging.getLogger()
        for handler in root.handlers[:]:
            root.removeHandler(handler)
        for handler in self._handlers:
            root.addHandler(handler)
        root.setLevel(self._level)
        self._log.close()
        for stream in (self.out, self.err):
            stream.close()
        self.out, self.err = sys.stdout, sys.stderr

    def say(self, text: str) -> None:
        """A line for the user (none with --json)."""
        if not self.quiet:
            print(text, file=self.out, flush=True)

    def result(self, text: str) -> None:
        """The command's result: printed even with --json."""
        print(text, file=self.out, flush=True)

    def progress_bar(self, total: int, unit: str = "step"):
        """A tqdm bar on the terminal; a no-op one with --json."""
        return tqdm(
            total=total,
            unit=unit,
            unit_scale=True,
            file=self.err,
            dynamic_ncols=True,
            disable=self.quiet,
            smoothing=0.1,
            mininterval=0.5,
        )

    def _new_log_path(self) -> Path:
        folder = Path(os.environ.get("SC2DASK_LOG_DIR") or Path(tempfile.gettempdir(), "sc2dask"))
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            folder = Path(tempfile.gettempdir())
        self.log_path = (
            folder / f"{self._command}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
        )
        return self.log_path
