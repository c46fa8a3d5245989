"""An agent whose parts do not take the calls sc2dask makes (``sc2dask.core``'s protocols) is
refused as its parts are built, with a ConfigError naming the method and the call; the
CLI prints it as one line with exit code 2 (tests/cli/test_agent_class.py)."""

import pytest

from sc2dask.agents.loading import build_agent, load_agent_class
from sc2dask.agents.protocol import check_layered_sync, check_learner
from sc2dask.core import AgentSpec
from sc2dask.errors import ConfigError

pytestmark = pytest.mark.unit

MODULE = "tests.agents.misfit_agents"
# The custom agent reads a 32x32 screen and its player row; no game needed to build it.
OBS_SPEC = {
    "feature_screen": (27, 32, 32),
    "feature_minimap": (11, 32, 32),
    "player": (11,),
    "available_actions": (0,),
}


def _learner(name: str):
    path = f"{MODULE}:{name}"
    return path, build_agent(AgentSpec(path, {})).make_learner(OBS_SPEC)


def test_the_shipped_agents_take_every_call():
    path, learner = _learner("Agent")
    check_learner(learner, path)
    check_layered_sync(learner.policy, path, layered_sync=2)


@pytest.mark.parametrize(
    "name, says",
    [
        ("PrepareTooNarrow", "prepare(gradients: bool) -> None cannot take sc2dask's call "
         "prepare(gradients=True, apply=True)"),
        ("ApplyWithoutLrScale", "apply_gradients(grads) -> None cannot take sc2dask's call "
         "apply_gradients(grads, lr_scale=1.0)"),
        ("PolicyWithoutState", "its policy (ActWithoutState): act(batch, rng) cannot take"),
    ],
)  # fmt: skip
def test_a_method_that_cannot_take_the_frameworks_call_is_named(name, says):
    path, learner = _learner(name)
    with pytest.raises(ConfigError, match="follow sc2dask.core") as raised:
        check_learner(learner, path)
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_head_weights_is_needed_only_by_layered_sync():
    path, learner = _learner("PolicyWithoutHeads")
    check_learner(learner, path)  # optional
    check_layered_sync(learner.policy, path, layered_sync=1)
    with pytest.raises(ConfigError, match="layered-sync 2 .* has no head_weights"):
        check_layered_sync(learner.policy, path, layered_sync=2)


def test_a_factory_that_takes_no_observation_spec_is_refused_as_the_class_loads():
    with pytest.raises(ConfigError, match=r"make_policy\(self\) cannot take sc2dask's call"):
        load_agent_class(f"{MODULE}:FactoryWithoutSpec")
