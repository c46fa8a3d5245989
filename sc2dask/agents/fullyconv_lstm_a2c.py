"""FullyConv-LSTM A2C: FullyConv A2C's loss and learner (``a2c.py``) with a memory
(``fullyconv_lstm.py``): the policy carries an LSTM's state from step to step, and the
learner unrolls it through each trajectory.

This module imports no TensorFlow, for the same reason as ``fullyconv_a2c.py``: a run
checks its agent class before its cluster starts.
"""

from __future__ import annotations

import dataclasses

from ..errors import ConfigError
from .config import A2CConfig
from .fullyconv_a2c import FullyConvA2C


@dataclasses.dataclass(frozen=True)
class LSTMConfig(A2CConfig):
    """``A2CConfig`` plus the LSTM's width (not a setting: subclass the agent with a Config
    of other defaults to change it, as for the relational agent)."""

    lstm_units: int = 256  # SC2LE's FullyConv's dense layer, now the memory's width

    def __post_init__(self) -> None:
        if self.lstm_units < 1:
            raise ConfigError(f"LSTMConfig.lstm_units must be at least 1, got {self.lstm_units}")


class FullyConvLSTMA2C(FullyConvA2C):
    """``agent-class``: ``sc2dask.agents.fullyconv_lstm_a2c:FullyConvLSTMA2C``."""

    Config = LSTMConfig

    def network(self):
        from .fullyconv_lstm import build_fullyconv_lstm

        return build_fullyconv_lstm

    def learner_class(self):
        from .fullyconv_lstm import RecurrentLearner

        return RecurrentLearner
