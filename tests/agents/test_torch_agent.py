"""The PyTorch agent (examples/torch_agent.py, the ``torch`` extra, which ./run-tests.sh
installs): it learns toward a rewarded click, its Adam moments survive a checkpoint, it
trains in every mode on a real cluster, and a run with it imports TensorFlow nowhere,
neither on the client nor on a host. A fresh interpreter runs each training: this test
process has imported TensorFlow for other tests."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sc2dask.agents.loading import agent_spec, build_agent
from sc2dask.core import Trajectory
from sc2dask.settings import AgentSettings, load

TORCH = "examples.torch_agent:Agent"
OBS_SPEC = {
    "feature_screen": (27, 8, 8),
    "feature_minimap": (11, 8, 8),
    "player": (11,),
    "available_actions": (573,),
}

RUN = textwrap.dedent(
    """
    import json, sys
    from distributed import Client
    import sc2dask
    from sc2dask.training.cluster import local_cluster

    def tensorflow_imported():
        import sys
        return "tensorflow" in sys.modules

    mode, folder = sys.argv[1], sys.argv[2]
    with local_cluster(n_workers=2) as cluster, Client(cluster) as client:
        summary = sc2dask.train(
            client=client, agent_class=sys.argv[5], map="MoveToBeacon",
            mode=mode, envs=2, max_steps=int(sys.argv[3]), checkpoint_dir=folder,
            checkpoint_every=5, resume=sys.argv[4] == "resume",
        ).wait()
        hosts = client.run(tensorflow_imported)
    print(json.dumps({**summary, "tf_client": tensorflow_imported(), "tf_hosts": hosts}))
    """
)


def _learner():
    settings = load(AgentSettings, {"screen": 8, "minimap": 8}, map_name="MoveToBeacon").values
    return build_agent(agent_spec(TORCH, settings)).make_learner(OBS_SPEC)


def _beacon_batch(steps: int = 4) -> Trajectory:
    """``steps`` moves on an 8x8 screen with a beacon at (3, 2); the first one, onto it, paid."""
    screen = np.zeros((steps + 1, 2, 8, 8), np.uint8)
    screen[:, 0, 2, 3] = 3  # the beacon: player_relative's neutral
    observations = {
        "screen": screen,
        "player": np.zeros((steps + 1, 11), np.float32),
        "available": np.ones((steps + 1, 3), bool),
    }
    clicks = np.array([2 * 8 + 3, *range(40, 40 + steps - 1)], np.int32)
    actions = {"function": np.full(steps, 2, np.int32), "screen": clicks}
    rewards = np.eye(steps, dtype=np.float32)[0]
    return Trajectory(observations, actions, rewards, np.eye(steps, dtype=bool)[-1], 0)


@pytest.mark.unit
def test_a_rewarded_click_gets_likelier_and_the_masked_functions_stay_finite():
    learner = _learner()
    batch = _beacon_batch()
    first = {k: v[:1] for k, v in batch.observations.items()}
    before = np.exp(learner.policy.evaluate(first)[0]["screen"].detach().numpy()[0, 19])
    for _ in range(5):
        grads, metrics = learner.compute_gradients([batch])
        learner.apply_gradients(grads)
    after = np.exp(learner.policy.evaluate(first)[0]["screen"].detach().numpy()[0, 19])
    assert after > before
    only_no_op = dict(first, available=np.array([[True, False, False]]))
    heads, outputs, calls, _ = learner.policy.act(only_no_op, np.random.default_rng(0), {})
    assert heads["function"][0] == 0 and np.isfinite(outputs["log_prob"]).all()
    assert all(np.isfinite(g).all() for g in learner.compute_gradients([batch])[0])


@pytest.mark.unit
def test_weights_and_adam_moments_restored_take_the_same_next_step():
    trained, fresh = _learner(), _learner()
    batch = _beacon_batch()
    for _ in range(3):
        trained.apply_gradients(trained.compute_gradients([batch])[0])
    fresh.set_weights(trained.get_weights())
    fresh.set_optimizer_state(trained.get_optimizer_state())
    grads = trained.compute_gradients([batch])[0]
    trained.apply_gradients(grads)
    fresh.apply_gradients(grads)
    for a, b in zip(trained.get_weights(), fresh.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    assert len(fresh.get_optimizer_state()) == 1 + 2 * len(grads)


def _train(mode: str, folder, steps: int, resume: bool = False) -> dict:
    args = [mode, str(folder), str(steps), "resume" if resume else "new", TORCH]
    done = subprocess.run(
        [sys.executable, "-c", RUN, *args], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.cluster
@pytest.mark.usefixtures("sc2path")
@pytest.mark.parametrize("mode", ["central", "sync", "async"])
def test_the_torch_agent_trains_in_each_mode_and_imports_no_tensorflow(tmp_path, mode):
    summary = _train(mode, tmp_path / "run", 400)
    assert summary["agent_steps"] >= 400 and summary["updates"] > 0
    assert summary["rejected_gradients"] == 0  # finite gradients, masked functions included
    assert summary["tf_client"] is False
    assert list(summary["tf_hosts"].values()) == [False, False]
    assert list((tmp_path / "run" / "tensorboard").iterdir())  # TensorBoard, without TF
