"""Agents that break ``sc2dask.core``'s protocols the way a user writing from the docs
might: each should be refused with one line naming the method (tests/agents/test_protocol.py
and the CLI's tests)."""

from examples.custom_agent import Agent, LinearPolicy, Reinforce


class TwoArgumentPrepare(Reinforce):
    def prepare(self, gradients: bool) -> None:  # the protocol's call passes apply= too
        pass


class PrepareTooNarrow(Agent):
    """A learner whose ``prepare`` does not take ``apply``."""

    def make_learner(self, obs_spec):
        return TwoArgumentPrepare(self.config, self.make_policy(obs_spec))


class NoLrScale(Reinforce):
    def apply_gradients(self, grads) -> None:  # the store passes lr_scale=
        super().apply_gradients(grads)


class ApplyWithoutLrScale(Agent):
    def make_learner(self, obs_spec):
        return NoLrScale(self.config, self.make_policy(obs_spec))


class ActWithoutState(LinearPolicy):
    def act(self, batch, rng):  # hosts pass each env's memory too
        return super().act(batch, rng, {})


class PolicyWithoutState(Agent):
    def make_policy(self, obs_spec):
        return ActWithoutState(self.config, obs_spec)


class NoHeads(LinearPolicy):
    head_weights = None  # optional, but layered sync needs it


class PolicyWithoutHeads(Agent):
    def make_policy(self, obs_spec):
        return NoHeads(self.config, obs_spec)


class FactoryWithoutSpec(Agent):
    def make_policy(self):  # the framework passes the env's observation spec
        return None
