"""Worker preload: ``dask worker SCHEDULER --resources SC2=4 --preload sc2dask.worker``.

(``sc2dask.worker`` re-exports this module's ``dask_setup``; the path is the documented one.)

Before a worker takes any work it

1. sizes TensorFlow's thread pools to the worker's own thread count, so N workers on a
   node share its cores instead of each claiming all of them (TF ignores the
   ``OMP_NUM_THREADS=1`` the Nanny sets), and
2. checks that this node can start StarCraft II: the real game, or the emulator, which
   it lays out where none is installed (``sc2dask.game.find_game``), and
3. reads the games already running for it (``sc2dask.worker.sc2``, HOST:PORT each), whose
   envs then attach to them instead of launching games (``sc2dask/game/attach.py``).

The outcome goes to the worker log, to the scheduler with the worker's registration
(``scheduler_info()["workers"][addr]["sc2dask"]``, which ``EnvPool`` checks before
placing envs) and, once registered, as a ``sc2dask-worker`` event. Importing this module
is cheap: TensorFlow and pysc2 load only when they are needed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket

# A child of distributed's logger, so the lines appear in the `dask worker` log with its
# format and level (a logger of our own would print only warnings, bare).
log = logging.getLogger("distributed.worker.sc2dask")

REPORT_KEY = "sc2dask"  # the worker's report, in scheduler_info()["workers"][address]
EVENT_TOPIC = "sc2dask-worker"
# TensorFlow reads these when it initialises (process_util.cc); EnvHost reads them too.
TF_THREAD_VARIABLES = ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS")


def dask_setup(worker) -> None:
    """Size TF's threads, check the SC2 install, and report both (``dask`` calls this)."""
    from ..errors import ConfigError
    from ..settings import WorkerSettings, load

    try:
        report = {
            "host": socket.gethostname(),
            "tf_threads": limit_tf_threads(worker.state.nthreads),
            **check_game(),
        }
    except ValueError as exc:  # a bad TF_NUM_*_THREADS: the worker runs, but hosts no envs
        report = {
            "host": socket.gethostname(),
            "tf_threads": None,
            "ok": False,
            "problem": "TensorFlow's threads are misconfigured",
            "error": str(exc),
        }
    try:  # running games of this node, for EnvPool to attach this worker's envs to
        report["sc2"] = list(load(WorkerSettings, origin="worker").values.sc2)
    except ConfigError as exc:
        report.update(
            ok=False, sc2=[], problem="its sc2dask.worker.sc2 is malformed", error=str(exc)
        )
    if report["ok"]:
        log.info(
            "sc2dask: %s; TensorFlow threads %d%s",
            report["summary"],
            report["tf_threads"],
            f"; envs attach to {', '.join(report['sc2'])}" if report["sc2"] else "",
        )
    else:
        log.error(
            "sc2dask: this worker cannot host envs (%s): %s",
            report.get("problem", "it cannot start StarCraft II"),
            report["error"],
        )
    worker.startup_information[REPORT_KEY] = lambda _worker: report
    # Events sent before the worker registers are dropped, so send it once registered.
    worker.loop.add_callback(_announce_when_registered, worker, report)


def limit_tf_threads(threads: int) -> int:
    """Give TensorFlow ``threads`` threads in this process, unless the user chose already."""
    for name in TF_THREAD_VARIABLES:
        os.environ.setdefault(name, str(max(1, threads)))
    return worker_tf_threads()


def worker_tf_threads() -> int:
    """TensorFlow threads this process was given (by the preload or the user); 1 if none.

    Raises ValueError naming the variable when one is not a whole number >= 1.
    """
    threads = {}
    for name in TF_THREAD_VARIABLES:
        text = os.environ.get(name, "1")
        try:
            threads[name] = int(text)
        except ValueError:
            threads[name] = 0
        if threads[name] < 1:
            raise ValueError(
                f"{name}={text!r} on this worker is not a whole number >= 1; "
                f"unset it (the preload then gives TensorFlow the worker's "
                f"--nthreads) or set a thread count, and restart the worker."
            )
    return threads[TF_THREAD_VARIABLES[0]]


def check_game() -> dict:
    """``{"ok": True, "kind", "path", "summary"}`` or ``{"ok": False, "error"}`` (with the fix)."""
    from ..errors import SC2DaskError
    from ..game import find_game

    try:
        game = find_game()
    except SC2DaskError as exc:  # its message names the fix
        return {"ok": False, "error": str(exc)}
    except OSError as exc:  # e.g. the emulator folder is not writable
        return {
            "ok": False,
            "error": (
                f"cannot lay out the sc2dask emulator ({type(exc).__name__}: {exc}). Point "
                f"SC2DASK_EMULATOR_DIR at a writable folder on this node, or SC2PATH at a "
                f"StarCraft II install, then restart the worker."
            ),
        }
    return {"ok": True, "kind": game.kind, "path": str(game.path), "summary": game.summary}


async def _announce_when_registered(worker, report: dict, timeout: float = 300.0) -> None:
    for _ in range(int(timeout / 0.1)):
        stream = worker.batched_stream
        if stream is not None and stream.comm is not None and not stream.comm.closed():
            worker.log_event(EVENT_TOPIC, {"worker": worker.address, **report})
            return
        await asyncio.sleep(0.1)
