"""``sc2dask train``: a run on a Dask cluster as a terminal shows it.

The links to watch it, one line saying what is trained, a progress bar, and a summary at
the end. The run belongs to this process: the first Ctrl-C (or a batch system's SIGTERM)
stops it cleanly after a checkpoint instead of killing it mid-update.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import signal
import threading

from .common import json_line, open_client, security_from_flags, use_config_file
from .console import Console
from .flags import given


def train_agent(args: argparse.Namespace) -> int:
    """Train on a Dask cluster with a progress bar; Ctrl-C stops after a checkpoint."""
    from ..agents.loading import check_agent_parts
    from ..agents.spaces import expected_obs_spec
    from ..training.loop import train
    from ..training.run_settings import resolve_run

    use_config_file(args)
    train_opts, agent_opts = given(args, args.train_fields), given(args, args.agent_fields)
    # Every check before a cluster starts; train() makes the same ones.
    run = resolve_run(train_opts, agent_opts, args.resume, origin="command line")
    run_opts = run.train
    with (
        Console("train", args.verbose, quiet=args.json) as console,
        contextlib.ExitStack() as stack,
    ):
        # The agent's parts too, once the console keeps TensorFlow's start-up logs off it.
        check_agent_parts(run.agent_spec, expected_obs_spec(run.agent), run_opts.layered_sync)
        envs = run_opts.envs or len(run_opts.sc2) or None
        client = open_client(stack, args.scheduler, envs, security_from_flags(args))
        _say_where_to_watch(console, client)
        bar = TrainingBar(lambda: console.progress_bar(run_opts.max_steps))
        handle = train(
            client=client,
            resume=args.resume,
            agent_overrides=agent_opts,
            on_update=bar.show,
            **train_opts,
        )
        bar.training = handle
        console.say(_what_is_trained(handle))
        try:
            summary = _wait_stopping_on_interrupt(handle, console)
        finally:
            bar.close(handle.progress)
    if args.json:
        console.result(json_line(summary))
    else:
        console.say(_done(summary))
    return 0


def _say_where_to_watch(console: Console, client) -> None:
    """The dashboard's link, and the training page's (or how to get one)."""
    from ..monitoring.telemetry import training_page_link

    console.say(f"Dask dashboard: {client.dashboard_link}")
    page = training_page_link(client)
    console.say(
        f"Training page:  {page}"
        if page
        else "Training page:  none (start the scheduler with --preload sc2dask.dashboard)"
    )


def _what_is_trained(handle) -> str:
    """The run's line: the settings it resolved to, which flags alone do not show."""
    from ..agents.loading import split_class_path

    budget = f"{handle.settings.max_steps} agent steps"
    if handle.settings.max_minutes is not None:
        budget += f" or {handle.settings.max_minutes:g} minutes, whichever comes first"
    return (
        f"Training {split_class_path(handle.agent_settings.agent_class)[1]} "
        f"on {handle.settings.map} "
        f"({handle.settings.mode} updates, "
        f"{handle.settings.envs or 'all'} envs, action set "
        f"{handle.agent_settings.action_set!r}) for {budget}; Ctrl-C stops after a "
        f"checkpoint"
    )


def _done(summary: dict) -> str:
    """The summary's line; games won and lost only where the map has outcomes."""
    score = summary["mean_score_last_100"]
    games = (
        f"; won {summary['wins']}, drew {summary['draws']}, lost {summary['losses']} "
        f"(win rate over the last 100 games {summary['win_rate_last_100']:.0%})"
        if summary.get("wins", 0) + summary.get("draws", 0) + summary.get("losses", 0)
        else ""
    )
    return (
        f"Done: {summary['agent_steps']} agent steps, {summary['updates']} updates "
        f"in {summary['wall_s']:.0f} s; mean score over the last 100 episodes "
        f"{'(no episode ended)' if math.isnan(score) else f'{score:.2f}'}{games}; "
        f"restarts {summary['restarts']}"
    )


class TrainingBar:
    """The progress bar of ``sc2dask train``: agent steps (and steps/s) against the total,
    with updates, episodes, the mean of the last 100 scores and env host restarts."""

    def __init__(self, make_bar):
        self._make_bar = make_bar  # called at the first update, so steps/s leaves out start-up
        self.bar = None
        self.training = None  # the Training, once started: its pool counts restarts

    def show(self, progress) -> None:
        if self.bar is None:
            self.bar = self._make_bar()
        self.bar.n = min(progress.agent_steps, self.bar.total)
        score = progress.mean_score_last_100
        won = progress.win_rate_last_100
        pool = self.training.pool if self.training is not None else None
        self.bar.set_postfix_str(
            f"updates {progress.updates}, episodes {progress.episodes}, score(100) "
            f"{'-' if math.isnan(score) else f'{score:.2f}'}"
            f"{'' if math.isnan(won) else f', won(100) {won:.0%}'}, host restarts "
            f"{pool.host_restarts if pool else 0}",
            refresh=False,
        )
        self.bar.refresh()

    def close(self, progress) -> None:
        if self.bar is not None:
            self.show(progress)
            self.bar.close()


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # Ctrl-C; `kill`, or a batch system's walltime


def _wait_stopping_on_interrupt(handle, console: Console) -> dict:
    """The run's summary; the first SIGINT or SIGTERM stops it cleanly (update in flight,
    checkpoint), a second one acts as it would have without sc2dask."""
    if threading.current_thread() is not threading.main_thread():
        return handle.wait()

    def stop(signum, frame):
        console.say(
            f"\n{signal.Signals(signum).name}: finishing the update in flight and checkpointing ..."
        )
        handle.stop()
        for number, handler in previous.items():
            signal.signal(number, handler)

    previous = {number: signal.signal(number, stop) for number in STOP_SIGNALS}
    try:
        while handle.running:
            handle.wait(timeout=0.5)
        return handle.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
