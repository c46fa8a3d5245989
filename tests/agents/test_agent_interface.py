"""``agent-class``: any class that follows ``sc2dask.core.Agent`` loads by dotted path; one
that does not is refused, before a cluster starts, with a message naming what is missing."""

import dataclasses
import re

import numpy as np
import pytest

from examples.custom_agent import Agent as CustomAgent
from sc2dask.agents.loading import agent_spec, build_agent, load_agent_class
from sc2dask.core import Trajectory, prepare_ahead
from sc2dask.errors import ConfigError
from sc2dask.settings import AgentSettings, load

pytestmark = pytest.mark.unit

CUSTOM = "examples.custom_agent:Agent"


class NoConfig:
    def make_policy(self, obs_spec): ...


@pytest.mark.parametrize(
    "path, message",
    [
        ("nonsense", "is not module:Class"),
        ("no_such_module:Agent", "cannot import 'no_such_module'"),
        ("examples.custom_agent:Nothing", "has no class 'Nothing'"),
        ("examples.custom_agent:ReinforceConfig", "is not an agent: it has no Config"),
        (
            f"{__name__}:NoConfig",
            "has no Config (a dataclass of its hyperparameters), make_learner",
        ),
    ],
)
def test_a_path_that_names_no_agent_is_refused_with_what_is_missing(path, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_agent_class(path)


def test_both_path_forms_load_the_same_class():
    assert (
        load_agent_class(CUSTOM) is load_agent_class("examples.custom_agent.Agent") is CustomAgent
    )


def test_config_fields_named_like_settings_take_the_runs_values_and_the_rest_their_defaults():
    settings = load(AgentSettings, {"screen": 16, "gamma": 0.9, "action_set": "move"}).values
    spec = agent_spec(CUSTOM, settings, seed=7)
    assert spec.config["screen"] == 16 and spec.config["gamma"] == 0.9
    assert spec.config["step_size"] == CustomAgent.Config.step_size  # not a setting
    assert "seed" not in spec.config  # this config has no seed to take
    assert set(spec.config) == {f.name for f in dataclasses.fields(CustomAgent.Config)}
    agent = build_agent(spec)
    assert isinstance(agent, CustomAgent) and agent.config.screen == 16


def test_the_default_agent_is_fullyconv_a2c_through_the_same_path():
    settings = load(AgentSettings).values
    agent_class = load_agent_class(settings.agent_class)
    assert agent_class.__name__ == "FullyConvA2C"
    assert (
        agent_spec(settings.agent_class, settings).config["conv_filters"] == settings.conv_filters
    )


def _obs_spec(size):
    return {
        "feature_screen": (27, size, size),
        "feature_minimap": (11, size, size),
        "player": (11,),
        "available_actions": (573,),
    }


def test_the_custom_agent_acts_and_learns_toward_the_rewarded_point():
    """REINFORCE moves the screen head's weights toward the one-hot channel under a
    rewarded click: one batch where clicking on value 3 (neutral) paid."""
    settings = load(AgentSettings, {"screen": 8, "minimap": 8}, map_name="MoveToBeacon").values
    assert settings.screen_layers == ("player_relative", "selected")
    agent = build_agent(agent_spec(CUSTOM, settings))
    learner = agent.make_learner(_obs_spec(8))
    rng = np.random.default_rng(0)
    screen = np.zeros((5, 2, 8, 8), np.uint8)
    screen[:, 0, 2, 3] = 3  # the beacon
    obs = {
        "screen": screen,
        "player": np.zeros((5, 11), np.float32),
        "available": np.ones((5, 3), bool),
    }
    heads, behaviour, calls, _ = learner.policy.act({k: v[:4] for k, v in obs.items()}, rng, {})
    assert len(calls) == 4 and behaviour["log_prob"].shape == (4,)
    actions = {
        "function": np.full(4, 2, np.int32),
        "screen": np.array([2 * 8 + 3, 0, 5, 9], np.int32),
    }
    trajectory = Trajectory(obs, actions, np.array([1, 0, 0, 0], np.float32), np.zeros(4, bool), 0)
    before = learner.get_weights()
    grads, metrics = learner.compute_gradients([trajectory])
    learner.apply_gradients(grads)
    moved = learner.get_weights()[1] - before[1]  # screen head: a weight per one-hot channel
    assert moved[3] > 0 and moved[3] == moved.max()


def test_prepare_is_optional_and_called_as_the_protocol_says():
    """A learner written to ``core.Learner`` alone has no ``prepare``; one that has it is
    called with the arguments ``PreparesAhead`` names (a run called it with an argument
    the protocol did not name)."""
    calls = []

    class Plain:
        pass

    class Eager:
        def prepare(self, gradients: bool, apply: bool) -> None:
            calls.append((gradients, apply))

    prepare_ahead(Plain(), gradients=True, apply=False)  # type: ignore[arg-type]
    prepare_ahead(Eager(), gradients=True, apply=False)  # type: ignore[arg-type]
    assert calls == [(True, False)]
