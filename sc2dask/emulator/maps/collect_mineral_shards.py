"""CollectMineralShards: two marines pick up shards; +1 score per 100 minerals."""

from __future__ import annotations

import math

from ..gamedata import MARINE, MINERAL_SHARD
from ..units import Owner
from .base import Scenario

SHARD_RECT = (23.0, 21.0, 43.0, 35.0)
SHARD_COUNT = 20
SHARD_MIN_DISTANCE = 2.0  # from the nearest marine when spawned
# A marine picks a shard up when their footprints touch: marine 0.375 + shard 0.5.
PICKUP_DISTANCE = 0.875


class CollectMineralShards(Scenario):
    name = "CollectMineralShards"

    def setup(self, world) -> None:
        world.agent.minerals = 0
        for _ in range(2):
            world.spawn(MARINE, Owner.AGENT, *world.random_point(self.playable))
        self._spawn_shards(world)

    def _spawn_shards(self, world) -> None:
        marines = [(m.x, m.y) for m in world.units_of(Owner.AGENT, MARINE)]
        for _ in range(SHARD_COUNT):
            world.spawn(
                MINERAL_SHARD,
                Owner.NEUTRAL,
                *world.random_point(SHARD_RECT, avoid=marines, min_dist=SHARD_MIN_DISTANCE),
            )

    def on_loop(self, world) -> None:
        shards = world.units_of(Owner.NEUTRAL, MINERAL_SHARD)
        for marine in world.units_of(Owner.AGENT, MARINE):
            for shard in shards:
                if (
                    shard.tag in world.units
                    and math.hypot(marine.x - shard.x, marine.y - shard.y) <= PICKUP_DISTANCE
                ):
                    world.remove(shard)
                    world.agent.minerals += 100
                    world.agent.stats.collected_minerals += 100
                    world.agent.score = world.agent.minerals // 100
        if not world.units_of(Owner.NEUTRAL, MINERAL_SHARD):
            self._spawn_shards(world)
