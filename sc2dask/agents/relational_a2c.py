"""Relational A2C: FullyConv A2C's policy, loss and learner (``a2c.py``) with the relational
network of Zambaldi et al. 2018 (``relational.py``) in place of FullyConv.

This module imports no TensorFlow, for the same reason as ``fullyconv_a2c.py``: a run
checks its agent class before its cluster starts.
"""

from __future__ import annotations

import dataclasses

from ..errors import ConfigError
from .config import A2CConfig
from .fullyconv_a2c import FullyConvA2C


@dataclasses.dataclass(frozen=True)
class RelationalConfig(A2CConfig):
    """``A2CConfig`` plus the relational module's shape. These fields are not settings: a
    run leaves them at these defaults; subclass the agent with a Config of other defaults
    to change them (docs/agents.md)."""

    entity_grid: int = 8  # attention runs on at most this many cells a side (8: 64 entities)
    attention_blocks: int = 2  # MHDPA blocks, one after the other (0: no relations)
    attention_heads: int = 2
    attention_size: int = 32  # query, key and value size of each head
    attention_mlp_units: int = 128  # hidden units of each block's per-entity MLP

    def __post_init__(self) -> None:
        least = {"entity_grid": 1, "attention_blocks": 0, "attention_heads": 1}
        least |= {"attention_size": 1, "attention_mlp_units": 1}
        for name, minimum in least.items():
            if getattr(self, name) < minimum:
                raise ConfigError(
                    f"RelationalConfig.{name} must be at least {minimum}, got {getattr(self, name)}"
                )


class RelationalA2C(FullyConvA2C):
    """``agent-class``: ``sc2dask.agents.relational_a2c:RelationalA2C``."""

    Config = RelationalConfig

    def network(self):
        from .relational import build_relational

        return build_relational
