"""The macro agent: A2C's policy, loss and learner (``a2c.py``, with PPO's clip and epochs)
over a set of macros, deciding with an MLP on counts (``macro_mlp.py``).

This module imports no TensorFlow, for the same reason as ``fullyconv_a2c.py``: a run
checks its agent class before its cluster starts.
"""

from __future__ import annotations

import dataclasses

from ..errors import ConfigError
from .config import A2CConfig
from .fullyconv_a2c import FullyConvA2C


@dataclasses.dataclass(frozen=True)
class MacroConfig(A2CConfig):
    """``A2CConfig`` plus the MLP's widths (not a setting: subclass the agent with a
    Config of other defaults to change them, as for the relational agent)."""

    mlp_units: tuple[int, ...] = (64, 64)

    def __post_init__(self) -> None:
        if not self.mlp_units or min(self.mlp_units) < 1:
            raise ConfigError(
                f"MacroConfig.mlp_units needs one or more layers of at least 1 unit, "
                f"got {self.mlp_units}"
            )


class MacroA2C(FullyConvA2C):
    """``agent-class``: ``sc2dask.agents.macro_a2c:MacroA2C``, Simple64's default."""

    Config = MacroConfig

    def network(self):
        from .macro_mlp import build_macro_mlp

        return build_macro_mlp
