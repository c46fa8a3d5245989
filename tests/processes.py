"""Command-line processes for tests that start `dask scheduler`/`dask worker` themselves,
as on separate nodes."""

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.waiting import wait_until

BIN = Path(sys.executable).parent


class Processes:
    """Command-line processes, each in its own process group, all killed on close."""

    def __init__(self, logs: Path):
        self.logs, self.started = logs, []

    def start(
        self, name: str, *args: str, env: dict | None = None, cwd: Path | None = None
    ) -> subprocess.Popen:
        """``env`` adds to this process's environment; a None value removes the variable.
        ``cwd``: the folder it starts in (default this one)."""
        environ = {**os.environ, **(env or {})}
        log = open(self.logs / f"{name}.log", "wb")
        process = subprocess.Popen(
            args,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={k: v for k, v in environ.items() if v is not None},
            cwd=cwd,
        )
        self.started.append((name, process, log))
        return process

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def scheduler(self) -> str:
        """Start `dask scheduler` on a random port; its address."""
        info = self.logs / "scheduler.json"
        self.start(
            "scheduler",
            str(BIN / "dask"),
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--dashboard-address",
            ":0",
            "--scheduler-file",
            str(info),
        )
        return wait_until(lambda: read_json(info), 60, "the scheduler file")["address"]

    def close(self):
        for _, process, _ in self.started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for _, process, log in self.started:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            log.close()


def read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):  # not written yet, or half written
        return None
