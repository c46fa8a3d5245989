"""``EnvSlot``: one environment of an env host, with its episode and crash bookkeeping."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os

from ..core import EpisodeResult, State
from ..errors import GameFailedError, SC2DaskError
from ..game import EnvConfig, game_seed, play_episode

log = logging.getLogger(__name__)

# A game that fails this many times in a row, without one good step between, is broken
# rather than crashed: its slot raises GameFailedError instead of starting it again.
MAX_FAILURES_IN_A_ROW = 5


class SlotClosed(RuntimeError):
    """The slot's host was closed (a slow host replaced): its work stops, no game restarts."""


@dataclasses.dataclass
class Step:
    """What one action did: its reward, whether it ended the episode, and the score and
    outcome then."""

    reward: float
    terminal: bool
    score: float | None  # the episode's score when ``terminal``, else None
    outcome: int | None = None  # +1, 0, -1 when a game for two ended, else None
    practice: int = 0  # a game against an easier bot: its level (game/easier_games.py)


class EnvSlot:
    """One pysc2 env that survives its game: a crashed game is closed, counted and
    started afresh with a new seed on the next use, up to ``MAX_FAILURES_IN_A_ROW``
    times without a good step. Used by one thread at a time.

    With an ``endpoint`` (HOST:PORT) it plays the running game there instead of launching
    one (``sc2dask/game/attach.py``): "started afresh" is then a reconnection, which waits
    for that game to listen again.
    """

    def __init__(self, config: EnvConfig, seed: int, endpoint: str | None = None):
        self.config, self.seed, self.endpoint = config, seed, endpoint
        self.env = None
        self.connected = False  # an attached game answered once: a later loss is a crash
        self.episodes = 0
        self.restarts = 0
        self.failures_in_a_row = 0
        self.retired = False  # closed for good: no game starts again
        self._timestep = None  # the env's current TimeStep, so rollouts continue across calls
        # A recurrent policy's memory of this env's episode, kept here so that it carries
        # across rollouts (runtime/rollout.py); None at an episode's start.
        self.memory: State | None = None

    def ensure(self):
        """The env, started if it is not running (SlotClosed once retired)."""
        if self.retired:
            raise SlotClosed("this env host was closed")
        if self.env is None:
            self.env = self.config.make(
                seed=self.seed, endpoint=self.endpoint, first=not self.connected
            )
            self.connected = True
            self._timestep = None
        return self.env

    def current(self):
        """The TimeStep the next action answers (a new episode if none is running)."""
        if self._timestep is None:
            self.reset()
        return self._timestep

    def reset(self):
        with self._closing():
            self._timestep = self.ensure().reset()[0]
        self.memory = None
        self.failures_in_a_row = 0
        return self._timestep

    def step(self, action) -> Step:
        """Play ``action``; an episode that ends is counted, and ``current`` starts the next."""
        with self._closing():
            timestep = self.env.step([action])[0]
        self.failures_in_a_row = 0
        if not timestep.last():
            self._timestep = timestep
            return Step(timestep.reward, False, None)
        self.episodes += 1
        self._timestep = None
        env = self.env
        return Step(timestep.reward, True, float(env.score), env.outcome, env.practice_level)

    def play_episode(self, agent, watch=None) -> EpisodeResult:
        """One whole episode with a set-up pysc2 ``agent`` (evaluation): its score and
        outcome. ``watch(timestep, score)`` sees each step (``game.play_episode``).

        Rollouts afterwards start a new episode, whatever happened to this one.
        """
        self._timestep = None
        with self._closing():
            env = self.ensure()
            score = play_episode(env, agent, watch)
        self.episodes += 1
        self.failures_in_a_row = 0
        return EpisodeResult(score, env.outcome)

    @contextlib.contextmanager
    def _closing(self):
        """Whatever a game call raises once the host has closed it under the call (pysc2
        fails in its own ways on a closed env, e.g. a TypeError) is SlotClosed."""
        try:
            yield
        except Exception as exc:
            if self.retired:
                raise SlotClosed("this env host was closed") from exc
            raise

    def crashed(self, exc: BaseException) -> None:
        """Close what is left of a crashed game; the next ``ensure`` starts a new one.

        Call it from the handler of ``GAME_FAILURES``. It raises instead when ``exc`` is
        one of sc2dask's own errors (a missing game or checkpoint is an OSError too, and
        no restart fixes it), or when the game keeps failing (GameFailedError).
        """
        if isinstance(exc, SC2DaskError):
            raise exc
        if self.retired:  # the game died because its host was closed
            raise SlotClosed("this env host was closed") from exc
        self.failures_in_a_row += 1
        if self.failures_in_a_row >= MAX_FAILURES_IN_A_ROW:
            self.close()
            where = (
                f"the game at {self.endpoint} (is it running and listening?)"
                if self.endpoint
                else f"this node's game (SC2PATH={os.environ.get('SC2PATH', 'unset')}; "
                f"`sc2dask emulator install` lays out the emulator)"
            )
            raise GameFailedError(
                f"The game of env {self.seed} failed {self.failures_in_a_row} times in a row "
                f"without one good step (last: {exc!r}). Check {where} and the worker's "
                f"log."
            ) from exc
        log.warning("SC2 crashed in env %s (%s); restarting it", self.seed, exc)
        self.restarts += 1
        self.seed = game_seed(self.seed, self.restarts)  # a new game cannot repeat the crash
        env, self.env, self._timestep = self.env, None, None
        try:
            env.close()
        except Exception:  # noqa: BLE001 - the game is already gone
            pass

    def pid(self) -> int | None:
        return None if self.env is None else self.env.game_pid

    def retire(self) -> None:
        """Close the game for good: work in flight stops instead of starting a new one."""
        self.retired = True
        self.close()

    def close(self) -> None:
        if self.env is not None:
            try:
                self.env.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
            self.env = None
        self._timestep = None
