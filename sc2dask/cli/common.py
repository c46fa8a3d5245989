"""What the commands share: the --config file, the cluster connection, the --json line.

``train`` and ``evaluate`` reach their cluster the same way (the --tls-* flags, Ctrl-C kept
from the workers) and end the same way with --json, so each of those lives here once.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import threading

from .. import settings
from ..errors import ConfigError


def use_config_file(args: argparse.Namespace) -> None:
    """Layer --config over the dask config before any setting is read."""
    if getattr(args, "config", None):
        settings.use_file(args.config)


def open_client(stack: contextlib.ExitStack, scheduler: str | None, envs: int | None, security):
    """A Dask client of ``scheduler`` (None: a local cluster sized for ``envs``), closed
    with ``stack``; Ctrl-C stays with this process while the cluster starts."""
    from ..training.cluster import cluster_client

    with _children_ignore_sigint():
        return stack.enter_context(cluster_client(scheduler, envs, security=security))


@contextlib.contextmanager
def _children_ignore_sigint():
    """Processes started inside (a local cluster's workers, and the games they start)
    ignore SIGINT: a terminal's Ctrl-C goes to the whole process group, and only this
    process should act on it, by stopping the run cleanly. (Ctrl-C is ignored while
    the cluster starts, a few seconds.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def security_from_flags(args: argparse.Namespace):
    """``distributed.Security`` from the --tls-* flags; None (dask's config) without them."""
    from ..training.cluster import tls_security

    files = {
        "--tls-ca-file": args.tls_ca_file,
        "--tls-cert": args.tls_cert,
        "--tls-key": args.tls_key,
    }
    if not any(files.values()):
        return None
    missing = [flag for flag, path in files.items() if not path]
    if missing:
        raise ConfigError(
            f"TLS needs all of --tls-ca-file, --tls-cert and --tls-key; "
            f"{' and '.join(missing)} missing."
        )
    for flag, path in files.items():
        if not os.path.isfile(path):
            raise ConfigError(
                f"{flag} {path}: no such file (a PEM file, as `dask scheduler {flag}` takes)."
            )
    return tls_security(*files.values())


def json_line(summary: dict) -> str:
    """``summary`` as strict JSON (NaN, e.g. a score before any episode ended, is null)."""
    return json.dumps(
        {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in summary.items()}
    )
