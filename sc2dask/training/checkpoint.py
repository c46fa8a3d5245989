"""Atomic checkpoints: weights, optimizer state, counters, config and RNG state.

A checkpoint is written to a temporary folder, flushed to disk and renamed into place,
and ``LATEST`` is replaced atomically after that, each rename made durable by an fsync of
the folder. A crash at any point leaves ``LATEST`` naming a whole checkpoint: a new
checkpoint never takes the name of the one ``LATEST`` names (saving the same update again
gets a new name), old ones are deleted only after ``LATEST`` moved, and what a crash left
half-written (``.tmp-*``) is cleared by the next save.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.loading import build_agent, load_agent_class
from ..core import AgentSpec
from ..errors import CheckpointError

LATEST = "LATEST"
KEEP = 3  # older checkpoints beyond these are deleted


LOCK = ".lock"


@contextlib.contextmanager
def run_lock(directory):
    """Hold ``directory`` for one run: it must be writable, and no other run may write to
    it meanwhile (two runs pruning each other's checkpoints would lose both). The lock is
    an ``flock`` on ``.lock``, so it goes with the process, however that ends."""
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle = open(directory / LOCK, "a+")
    except OSError as exc:
        raise CheckpointError(
            f"Cannot write checkpoints to {str(directory)!r} "
            f"({exc.strerror or exc}); give a writable --checkpoint-dir."
        ) from None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            raise CheckpointError(
                f"Another run is writing checkpoints to {str(directory)!r} (process "
                f"{handle.read().strip() or '?'}); give this run its own --checkpoint-dir, "
                f"or stop the other one first."
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}@{socket.gethostname()}\n")
        handle.flush()
        yield directory


def save(directory, update: int, weights, optimizer_state, state: dict) -> Path:
    """Write checkpoint ``update`` under ``directory``; returns its folder.

    One run writes to a folder at a time (a second writer's half-written files would be
    cleared as a crash's).
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for leftover in [*directory.glob(".tmp-*"), directory / (LATEST + ".tmp")]:
        _remove(leftover)  # a crash's, mid-write
    final = _free_name(directory, f"ckpt-{update:08d}")
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=directory))
    try:
        np.savez(tmp / "weights.npz", *weights)
        np.savez(tmp / "optimizer.npz", *optimizer_state)
        (tmp / "state.json").write_text(json.dumps(state, indent=1, default=_plain))
        for f in tmp.iterdir():
            _fsync(f)
        now = time.time_ns()  # the write order _prune goes by (a folder's mtime is coarser)
        os.utime(tmp, ns=(now, now))
        _fsync(tmp)
        os.replace(tmp, final)
        _fsync(directory)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _write_atomic(directory / LATEST, final.name)
    _prune(directory, keep=final)
    return final


def _free_name(directory: Path, name: str) -> Path:
    """``name``, or ``name.1``, ``name.2``...: never the folder of an earlier save, which
    ``LATEST`` may name until the new one is complete."""
    candidate, n = directory / name, 0
    while candidate.exists():
        n += 1
        candidate = directory / f"{name}.{n}"
    return candidate


def _prune(directory: Path, keep: Path) -> None:
    """Keep the ``KEEP`` checkpoints written last (by time, not by name: a run resumed
    from an older checkpoint writes lower update numbers than the ones it left behind)."""
    folders = sorted(
        (p for p in directory.glob("ckpt-*") if p.is_dir() and p != keep),
        key=lambda p: (p.stat().st_mtime_ns, p.name),
    )
    for old in folders[: max(0, len(folders) - (KEEP - 1))]:
        shutil.rmtree(old, ignore_errors=True)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    """Flush a file, or a folder's entries (so a rename inside it survives a power cut)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def load(directory) -> tuple[list[np.ndarray], list[np.ndarray], dict]:
    """(weights, optimizer state, state dict) of the latest checkpoint in ``directory``."""
    directory = Path(directory)
    try:
        name = (directory / LATEST).read_text().strip()
    except OSError:
        raise CheckpointError(
            f"No checkpoint in {str(directory)!r} (no {LATEST} file); "
            "train with --checkpoint-dir first."
        ) from None
    folder = directory / name
    try:
        state = json.loads((folder / "state.json").read_text())
        weights = _arrays(folder / "weights.npz")
        optimizer = _arrays(folder / "optimizer.npz")
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise CheckpointError(
            f"Checkpoint {str(folder)!r} is incomplete or corrupt ({exc}); "
            "delete it and point LATEST at an older ckpt-* folder."
        ) from None
    return weights, optimizer, state


def _arrays(path: Path) -> list[np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return [data[f"arr_{i}"] for i in range(len(data.files))]


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    _fsync(tmp)
    os.replace(tmp, path)
    _fsync(path.parent)


def _plain(value):
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot store {type(value).__name__} in a checkpoint")


def agent_code(agent_path: str) -> list[str]:
    """The class paths whose code an evaluation of ``agent_path`` needs on the workers: the
    pysc2 agent's own, and a checkpoint's agent class."""
    path, _, argument = agent_path.partition(":")
    if path != CHECKPOINT_AGENT:
        return [path]
    return [saved_agent(load(argument)[2]).class_path]


CHECKPOINT_AGENT = "sc2dask.training.checkpoint.CheckpointAgent"


def checkpoint_agent_path(directory) -> str:
    """The agent spec that ``sc2dask evaluate --checkpoint`` plays (validated here)."""
    load(directory)
    return f"{CHECKPOINT_AGENT}:{Path(directory).resolve()}"


# Checkpoints written before agents were named by class are FullyConv A2C's.
FULLYCONV_A2C = "sc2dask.agents.fullyconv_a2c:FullyConvA2C"


def saved_agent(state: dict) -> AgentSpec:
    """The agent a checkpoint was trained with (older checkpoints included): fields its
    class's config no longer has are dropped, lists become tuples again."""
    path = state.get("agent_class", FULLYCONV_A2C)
    saved = dict(state["agent_config"])
    for old, new in _RENAMED.items():
        if old in saved:
            saved[new] = saved.pop(old)
    known = {f.name for f in dataclasses.fields(load_agent_class(path).Config)}
    config: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in saved.items() if k in known
    }
    return AgentSpec(path, config)


# The config fields that shape a network: a checkpoint's weights fit only a run that has
# the same ones (where both configs have them).
NETWORK_SETTINGS = (
    "action_set",
    "screen_layers",
    "minimap_layers",
    "screen",
    "minimap",
    "conv_filters",
    "conv_kernels",
    "dense_grid",
    "spatial_dilations",
    "entity_grid",  # the relational agent's
    "attention_blocks",
    "attention_heads",
    "attention_size",
    "attention_mlp_units",
    "mlp_units",  # the macro agent's
)


def network_differences(
    state: dict, agent: AgentSpec, names: Iterable[str] = NETWORK_SETTINGS
) -> dict[str, object]:
    """The agent class or network-shaping fields (or other ``names``) whose value in
    checkpoint ``state`` is not ``agent``'s: {name: the checkpoint's value}. Map defaults
    change (MoveToBeacon's network shrank), so a run resumed with today's defaults may not
    fit yesterday's."""
    saved = saved_agent(state)
    if saved.class_path != agent.class_path:
        return {"agent_class": saved.class_path}
    return {
        name: saved.config[name]
        for name in names
        if name in saved.config and saved.config[name] != agent.config.get(name)
    }


# What a checkpoint's env must keep whatever evaluation is told: the actions it plays and
# the observations it reads are its own.
OWN_ENV_FIELDS = ("macro_actions", "feature_layers")


def checkpoint_env(directory) -> dict:
    """The ``EnvConfig`` fields (map_name, screen, minimap, step_mul, the race and
    opponent of a game for two, whether it takes macro actions and reads feature layers)
    a checkpoint was trained with, so evaluation plays what the network expects."""
    _, _, state = load(directory)
    if "env_config" in state:
        env = state["env_config"]
    else:  # written before checkpoints kept the env config
        config = saved_agent(state).config
        env = {
            "map_name": state["settings"]["map"],
            "screen": config["screen"],
            "minimap": config["minimap"],
            "step_mul": state["settings"].get("step-mul", 8),
        }
    return {
        k: tuple(v) if isinstance(v, list) else v
        for k, v in env.items()
        if k in ("map_name", "screen", "minimap", "step_mul", "race", "opponent", *OWN_ENV_FIELDS)
    }


# Fields of checkpoints written before the settings were unified (sc2dask/settings.py).
_RENAMED = {"screen_size": "screen", "minimap_size": "minimap"}


class CheckpointAgent:
    """A pysc2 agent that plays a trained checkpoint (``sc2dask evaluate --checkpoint``)."""

    def __init__(self, directory: str):
        weights, _, state = load(directory)
        agent = build_agent(saved_agent(state))
        self.policy = agent.make_policy({k: tuple(v) for k, v in state["obs_spec"].items()})
        self.policy.set_weights(weights)
        self.rng = np.random.default_rng()
        self.state = self.policy.initial_state(1)  # a recurrent policy's memory

    def seed(self, seed: int) -> None:
        """Its sampling from ``seed`` (an env host gives each episode its own)."""
        self.rng = np.random.default_rng(seed)

    def setup(self, obs_spec, action_spec):
        pass

    def reset(self):
        self.state = self.policy.initial_state(1)

    def step(self, timestep):
        batch = self.policy.encoder.encode_batch([timestep.observation])
        _, _, calls, self.state = self.policy.act(batch, self.rng, self.state)
        return calls[0]
