"""Synchronous advantage actor-critic (A2C), with the FullyConv network or another builder's.

Read top to bottom: the policy that env hosts run (``Policy.act``), the returns
(``discounted_returns``, and ``advantage_operator``, the same as a matrix for the graph),
the loss (``a2c_loss``) and the learner that turns ``Trajectory`` records into gradients
and applies them (``Learner``). The hyperparameters (``A2CConfig``) are in
``sc2dask/agents/config.py``, which does not import TensorFlow.
Weights, gradients and optimizer state leave this module as lists of numpy arrays:
Keras 3 models do not pickle through distributed, so each process rebuilds the model
from ``(A2CConfig, obs_spec)`` and loads the arrays. The network is a ``ModelBuilder``
argument (``build_fullyconv`` unless the agent class passes another): any model with the
same inputs and output dict serves this loss and learner.

How a ``Trajectory`` is filled (``Trajectory.from_steps`` does it from per-step records):
``observations[k]`` is ``[T + 1, ...]`` for each key of ``ObservationEncoder.spec()``;
``observations[..][t]`` is what the policy saw when it chose step t's action, and the
last entry is the state after the final step. After a step with ``terminal[t]`` the
next entry is the first observation of the new episode (the host resets the env).
``actions`` holds ``"function"`` and every argument head of the action set, each
``[T]`` int32, exactly as ``Policy.act`` returned them (heads the chosen function does
not use are stored too and ignored by the loss). ``rewards[t]`` is the reward of the
timestep that step t's action produced.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

import keras
import numpy as np
import tensorflow as tf

from ..core import NonFiniteGradients, State, Trajectory
from .config import A2CConfig
from .fullyconv import build_fullyconv
from .spaces import ActionSet, InputSpec, ObservationEncoder

log = logging.getLogger(__name__)

# (encoder spec, action set, config) -> a Keras model with ``build_fullyconv``'s inputs and
# outputs; its head layers named as ``SplitsHeads.head_weights`` expects.
ModelBuilder = Callable[[Mapping[str, InputSpec], ActionSet, A2CConfig], keras.Model]

# Logit given to functions the game does not allow now. Finite (unlike -inf) so the
# entropy's p * log p stays 0 * big = 0 and its gradient never becomes NaN; exp() of it
# is exactly 0 in float32, so the function is never chosen.
MASKED_LOGIT = -1e9


def set_tf_threads(intra_op: int, inter_op: int | None = None) -> bool:
    """Size TensorFlow's thread pools (its own; they ignore OMP_NUM_THREADS).

    TensorFlow fixes them at its first op, so call this first thing in a process (e.g.
    a worker preload). Later calls change nothing; returns whether the sizes now in
    effect are the ones asked for.
    """
    inter_op = intra_op if inter_op is None else inter_op
    try:
        tf.config.threading.set_intra_op_parallelism_threads(intra_op)
        tf.config.threading.set_inter_op_parallelism_threads(inter_op)
    except RuntimeError:  # already initialised
        log.debug("TensorFlow already initialised; thread pools left as they are")
    return (
        tf.config.threading.get_intra_op_parallelism_threads() == intra_op
        and tf.config.threading.get_inter_op_parallelism_threads() == inter_op
    )


class _Graph:
    """A TensorFlow graph of ``fn`` for one input signature, traced on its first call and
    then called as a concrete function.

    A ``tf.function`` call binds and type-checks its arguments before it runs the graph,
    on every forward pass of a host. Keras's own ``set_weights``/``get_weights`` run one
    op per array, for the weights a host loads every rollout and the store reads every
    update. A concrete function does each in one call (the times are in
    docs/results/throughput.md).
    """

    def __init__(self, fn, input_signature: list, jit_compile: bool = False):
        self._function = tf.function(fn, input_signature=input_signature, jit_compile=jit_compile)
        self._concrete = None

    def trace(self) -> None:
        """Trace now rather than on the first call (an env host before its first rollout)."""
        if self._concrete is None:
            self._concrete = self._function.get_concrete_function()

    def __call__(self, *args):
        # Traced when first needed, not at construction: a central-mode host never
        # computes gradients.
        self.trace()
        return self._concrete(*args)


# ----------------------------------------------------------------------------- policy


class Policy:
    """The network plus what it needs to act in pysc2: encoder and action set."""

    def __init__(
        self,
        config: A2CConfig,
        obs_spec: Mapping[str, tuple],
        build_model: ModelBuilder = build_fullyconv,
    ):
        self.config = config
        self.obs_spec = {k: tuple(v) for k, v in obs_spec.items()}  # plain, picklable
        self.encoder = ObservationEncoder(self.obs_spec, config)
        self.action_set = self.encoder.action_set
        self.model = build_model(self.encoder.spec(), self.action_set, config)
        # What the network reads of the encoded observation (a macro policy's MLP reads
        # no layers; FullyConv reads no "macro" numbers), named by its inputs.
        self.input_keys = tuple(t.name for t in self.model.inputs)
        self.forward = _Graph(lambda batch: self.model(batch, training=False), [self._signature()])
        variables = self.model.weights

        def assign(values):
            for variable, value in zip(variables, values):
                variable.assign(value)

        self._read = _Graph(lambda: [v.value for v in variables], [])
        self._assign = _Graph(assign, [[tf.TensorSpec(v.shape, v.dtype) for v in variables]])

    def initial_state(self, batch_size: int) -> State:
        """FullyConv has no memory: each step sees only its observation."""
        return {}

    def _signature(self) -> dict:
        """The forward pass's inputs: what the network reads of an encoded batch."""
        return {
            k: tf.TensorSpec((None, *s.shape), s.dtype.name)
            for k, s in self.encoder.spec().items()
            if k in self.input_keys
        }

    def act(
        self,
        observations: Sequence | Mapping[str, np.ndarray],
        rng: np.random.Generator,
        state: State | None = None,
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], list, State]:
        """Sample one action per env.

        ``observations``: pysc2 observations (``TimeStep.observation``), or the batch
        ``encoder.encode_batch`` made of them (pass that when you also store it).
        Returns head indices (each [B] int32: "function" and every argument head), the
        policy's view of them ({"value": [B], "log_prob": [B]}, log pi of the whole
        action: function plus the arguments it takes), the pysc2 ``FunctionCall`` for
        each env, and the memory after the step (none here: only a network with a memory,
        ``fullyconv_lstm.py``, reads ``state``).
        """
        batch = self._batch(observations)
        outputs = self.forward(self._inputs(batch, state))
        logits = outputs["function"].numpy()
        available = batch["available"]
        if not available.any(axis=1).all():
            raise ValueError(
                f"No function of action set {self.action_set.name!r} is "
                f"available; include no_op in the set."
            )
        logits = np.where(available, logits, -np.inf)
        actions = {"function": _sample(logits, rng)}
        log_prob = _log_prob(logits, actions["function"])
        uses = self.action_set.uses[actions["function"]]  # [B, n_args]
        for i, head in enumerate(self.action_set.argument_heads):
            head_logits = outputs[head].numpy()
            actions[head] = _sample(head_logits, rng)
            log_prob += np.where(uses[:, i], _log_prob(head_logits, actions[head]), 0.0)
        behaviour = {"value": outputs["value"].numpy(), "log_prob": log_prob.astype(np.float32)}
        return actions, behaviour, self.action_set.function_calls(actions), self._memory(outputs)

    def value(self, observations: Sequence | Mapping[str, np.ndarray]) -> np.ndarray:
        """Value estimates [B] of a batch of observations."""
        return self.forward(self._inputs(self._batch(observations)))["value"].numpy()

    def get_weights(self) -> list[np.ndarray]:
        """A copy of every weight (``model.weights`` order), owned by the caller."""
        return [x.numpy() for x in self._read()]

    def head_weights(self) -> list[bool]:
        """Which of ``get_weights()`` belong to the policy's logits and the value head:
        the small layers that layered synchronisation sends with every update."""
        return [
            w.path.split("/")[0].endswith("_logits") or w.path.startswith("value_dense")
            for w in self.model.weights
        ]

    def set_weights(self, weights: Sequence[np.ndarray]) -> None:
        variables = self.model.weights
        _check_shapes(weights, variables, "weight", "were they saved with another config?")
        self._assign([np.asarray(w, v.dtype) for w, v in zip(weights, variables)])

    def _batch(self, observations):
        if isinstance(observations, Mapping):
            return observations
        return self.encoder.encode_batch(observations)

    def _inputs(self, batch, state: State | None = None):
        """The forward pass's inputs from an encoded batch (and the memory, for a network
        that has one: ``fullyconv_lstm.py``)."""
        return {k: tf.convert_to_tensor(batch[k]) for k in self.input_keys}

    def _memory(self, outputs) -> State:
        """The memory after a step, from the forward pass's outputs (none here)."""
        return {}


def _sample(logits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index per row from softmax(logits), by the Gumbel-max trick."""
    return np.argmax(logits + rng.gumbel(size=logits.shape), axis=1).astype(np.int32)


def _log_prob(logits: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """log softmax(logits)[chosen] per row; -inf logits are impossible choices."""
    top = logits.max(axis=1, keepdims=True)
    log_z = np.log(np.exp(logits - top).sum(axis=1)) + top[:, 0]
    return logits[np.arange(len(chosen)), chosen] - log_z


# ---------------------------------------------------------------------------- returns


def discounted_returns(
    rewards: np.ndarray,
    terminal: np.ndarray,
    values: np.ndarray,
    bootstrap_value: float,
    gamma: float,
    gae_lambda: float,
) -> tuple[np.ndarray, np.ndarray]:
    """GAE(lambda) advantages and value targets for one trajectory.

    ``values`` [T] are V(s_t); ``bootstrap_value`` is V of the last observation. A
    terminal step neither bootstraps nor lets later rewards in. With lambda = 1 the
    targets are the n-step returns r_t + g r_t+1 + ... + g^k V(s_T).
    """
    advantages = np.zeros(len(rewards), np.float32)
    next_value, next_advantage = bootstrap_value, 0.0
    for t in reversed(range(len(rewards))):
        not_done = 1.0 - float(terminal[t])
        delta = rewards[t] + gamma * next_value * not_done - values[t]
        next_advantage = delta + gamma * gae_lambda * not_done * next_advantage
        advantages[t] = next_advantage
        next_value = values[t]
    return advantages + values, advantages


def advantage_operator(
    lengths: Sequence[int], not_done: np.ndarray, gamma_lambda: float
) -> np.ndarray:
    """The [N, N] matrix that turns TD errors into GAE advantages: A = M @ delta.

    M[t, k] = (gamma lambda)^(k - t) while no episode ends in between, within one
    trajectory (``lengths`` steps each, concatenated), else 0. As a matrix the advantages
    are computed in the same graph as the forward pass, so values need no pass of their own.
    """
    n = int(sum(lengths))
    operator = np.zeros((n, n), np.float32)
    start = 0
    for length in lengths:  # a block per trajectory, each built without a loop over steps
        decay = gamma_lambda * np.asarray(not_done[start : start + length], np.float64)
        later = np.arange(length)[None, :] >= np.arange(length)[:, None]
        # products[t, k] = decay[t] * ... * decay[k] for k >= t
        products = np.cumprod(np.where(later, decay[None, :], 1.0), axis=1)
        block = np.ones((length, length))
        block[:, 1:] = products[:, :-1]  # M[t, k] = decay[t] * ... * decay[k - 1]
        operator[start : start + length, start : start + length] = np.triu(block)
        start += length
    return operator


# ------------------------------------------------------------------------------- loss


def a2c_loss(
    value: tf.Tensor,
    log_prob: tf.Tensor,
    entropy: tf.Tensor,
    returns: tf.Tensor,
    advantages: tf.Tensor,
    behaviour_log_prob: tf.Tensor,
    config: A2CConfig,
) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
    """The A2C loss over a batch of N steps; returns (loss, metrics).

    ``log_prob`` and ``entropy`` per step come from ``log_prob_and_entropy``. The policy
    term is the clipped surrogate on r = pi / pi_behaviour (``A2CConfig.clip_ratio``);
    NaN in ``behaviour_log_prob`` means "acted with these weights" (r = 1: the plain A2C
    gradient).
    """
    if config.normalize_advantages:
        mean, variance = tf.nn.moments(advantages, axes=[0])
        advantages = (advantages - mean) / (tf.sqrt(variance) + 1e-8)
    advantages = tf.stop_gradient(advantages)
    behaviour = tf.where(
        tf.math.is_nan(behaviour_log_prob), tf.stop_gradient(log_prob), behaviour_log_prob
    )
    ratio = tf.exp(log_prob - behaviour)
    clipped = tf.clip_by_value(ratio, 1.0 - config.clip_ratio, 1.0 + config.clip_ratio)
    policy_loss = -tf.reduce_mean(tf.minimum(ratio * advantages, clipped * advantages))
    value_loss = 0.5 * tf.reduce_mean(tf.square(returns - value))
    entropy = tf.reduce_mean(entropy)
    loss = policy_loss + config.value_coef * value_loss - config.entropy_coef * entropy
    clip_fraction = tf.reduce_mean(tf.cast(tf.abs(ratio - 1.0) > config.clip_ratio, tf.float32))
    return loss, {
        "loss": loss,
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "entropy": entropy,
        "clip_fraction": clip_fraction,
    }


def _kickstarted(loss, metrics, logits, available, teacher, weight):
    """The loss plus each step's ``weight`` times the cross-entropy from the teacher's
    choice to the policy's function head (Schmitt et al. 2018, "Kickstarting Deep
    Reinforcement Learning"): on the student's own states, so it learns what the teacher
    does where the student goes, and the reward's terms carry it past the teacher as the
    weight falls. Metrics: the cross-entropy, and how often the policy's likeliest choice
    is the teacher's."""
    log_probs = function_log_probs(logits, available)
    cross_entropy = -_chosen(log_probs, teacher)
    agrees = tf.cast(tf.argmax(log_probs, axis=-1, output_type=tf.int32) == teacher, tf.float32)
    loss = loss + tf.reduce_mean(weight * cross_entropy)
    return loss, {
        **metrics,
        "loss": loss,
        "kickstart_cross_entropy": tf.reduce_mean(cross_entropy),
        "teacher_agreement": tf.reduce_mean(agrees),
    }


def function_log_probs(logits, available):
    """log pi over the function head, the functions not available masked out."""
    return tf.nn.log_softmax(tf.where(available, logits, MASKED_LOGIT))


def log_prob_and_entropy(outputs, actions, available, uses, argument_heads):
    """log pi(a|s) of each step's call and the policy's entropy over the same heads: the
    function's (among the available ones) plus those of the arguments it takes."""
    log_probs = function_log_probs(outputs["function"], available)
    log_prob = _chosen(log_probs, actions["function"])
    entropy = _entropy(log_probs)
    used = tf.gather(tf.cast(uses, tf.float32), actions["function"])  # [N, n_args]
    for i, head in enumerate(argument_heads):
        head_log_probs = tf.nn.log_softmax(outputs[head])
        log_prob += used[:, i] * _chosen(head_log_probs, actions[head])
        entropy += used[:, i] * _entropy(head_log_probs)
    return log_prob, entropy


def vtrace(deltas, value_now, not_done, step_rows, operator, log_ratio, gamma):
    """IMPALA's V-trace (Espeholt et al. 2018) over concatenated trajectories: (value
    targets, policy advantages) for data played with older weights.

    GAE's returns treat every step as played by today's policy; with hosts many updates
    behind they are not. V-trace weighs each TD error (``deltas``: r + gamma V(x') - V(x),
    without V(x') where an episode ends) by rho = min(1, pi/mu) and each step of the trace by
    c = lambda min(1, pi/mu), so steps today's policy would not take count less.
    ``operator`` is ``advantage_operator``'s matrix (lambda, gamma and episode ends);
    ``log_ratio`` is log pi/mu per step (0 where the data is fresh: then the targets are
    GAE's returns, and with lambda 1 the advantages are GAE's too).
    """
    log_c = tf.minimum(log_ratio, 0.0)
    rho = tf.exp(log_c)
    before = tf.cumsum(log_c, exclusive=True)  # sum of log c over the steps before each
    # operator[t, k] * c_t ... c_(k-1); below the diagonal the operator is 0 and the
    # exponent, clipped at 0, cannot overflow.
    traces = operator * tf.exp(tf.minimum(before[None, :] - before[:, None], 0.0))
    corrections = tf.linalg.matvec(traces, rho * deltas)  # v_s - V(x_s)
    # rho_s (r_s + gamma v_(s+1) - V(x_s)) = rho_s (delta_s + gamma (v_(s+1) - V(x_(s+1)))),
    # where v_(s+1) - V(x_(s+1)) is the next step's correction within the trajectory, 0
    # for its bootstrap row, and nothing past an episode's end.
    continues = tf.concat([tf.equal(step_rows[1:], step_rows[:-1] + 1), [False]], axis=0)
    later = tf.concat([corrections[1:], tf.zeros([1], corrections.dtype)], axis=0)
    later = not_done * tf.where(continues, later, tf.zeros_like(later))
    return value_now + corrections, rho * (deltas + gamma * later)


def _chosen(log_probs, indices):
    return tf.gather(log_probs, indices, batch_dims=1)


def _entropy(log_probs):
    return -tf.reduce_sum(tf.exp(log_probs) * log_probs, axis=-1)


# ---------------------------------------------------------------------------- learner


class Learner:
    """Turns trajectories into gradients, and applies gradients with Adam.

    The same class serves both roles: gradient workers call ``compute_gradients``; the
    parameter store calls ``apply_gradients`` and checkpoints weights plus optimizer state.
    """

    policy_class = Policy  # a recurrent network's learner acts with its own (fullyconv_lstm.py)

    def __init__(
        self,
        config: A2CConfig,
        obs_spec: Mapping[str, tuple],
        build_model: ModelBuilder = build_fullyconv,
    ):
        self.config = config
        self.policy = self.policy_class(config, obs_spec, build_model)
        self.model = self.policy.model
        self.optimizer = keras.optimizers.Adam(
            config.learning_rate, epsilon=config.adam_epsilon, global_clipnorm=config.max_grad_norm
        )
        self.optimizer.build(self.model.trainable_variables)  # so state can be restored
        self._uses = tf.constant(self.policy.action_set.uses)
        act_sig = {h: tf.TensorSpec((None,), tf.int32) for h in self.policy.action_set.heads}
        step_sig = tf.TensorSpec((None,), tf.float32)
        self._gradients = _Graph(
            self._gradients_graph,
            [
                self._row_signature(),
                act_sig,
                step_sig,
                step_sig,
                tf.TensorSpec((None,), tf.int32),
                tf.TensorSpec((None, None), tf.float32),
                step_sig,
                step_sig,
                tf.TensorSpec((), tf.float32),
            ],
            # Only the gradient: XLA made Adam's step slower (docs/results/throughput.md).
            jit_compile=config.jit_compile,
        )
        self.loss_scale = LossScale(dynamic=config.precision == "mixed_float16")
        # The trainable arrays' sizes: how the flat gradient of apply_gradients splits.
        self._sizes = [int(np.prod(v.shape)) for v in self.model.trainable_variables]
        self._apply = _Graph(
            self._adam_step,
            [tf.TensorSpec((sum(self._sizes),), tf.float32), tf.TensorSpec((), tf.float32)],
        )

    def prepare(self, gradients: bool = True, apply: bool = True) -> None:
        """Trace the graphs of acting, of the gradients and of the optimizer's step now,
        rather than in the run's first update, while the rest of the cluster waits for it."""
        self.policy.forward.trace()
        if gradients:
            self._gradients.trace()
        if apply:
            self._apply.trace()

    def compute_gradients(
        self, trajectories: Sequence[Trajectory]
    ) -> tuple[list[np.ndarray], dict[str, float]]:
        """Gradients of the mean A2C loss over every step of ``trajectories``.

        Returns one array per trainable weight (``model.trainable_variables`` order) and
        scalar metrics. Raises ValueError on malformed or non-finite inputs or gradients.
        One forward pass serves both the values (returns, bootstrap) and the gradients.
        """
        if not trajectories:
            raise ValueError("compute_gradients needs at least one trajectory")
        for trajectory in trajectories:
            self._check(trajectory)
        rows = self._rows(trajectories)
        step_rows, not_done = _steps_and_continues(trajectories)
        operator = advantage_operator(
            [len(t) for t in trajectories], not_done, self.config.gamma * self.config.gae_lambda
        )
        actions = {
            h: np.concatenate([np.asarray(t.actions[h], np.int32) for t in trajectories])
            for h in self.policy.action_set.heads
        }
        rewards = np.concatenate([np.asarray(t.rewards, np.float32) for t in trajectories])
        rewards *= np.float32(self.config.reward_scale)
        behaviour = np.concatenate(
            [
                np.full(len(t), np.nan, np.float32)
                if t.log_probs is None
                else np.asarray(t.log_probs, np.float32)
                for t in trajectories
            ]
        )
        kickstart = np.concatenate(
            [np.full(len(t), self._kickstart_weight(t.version), np.float32) for t in trajectories]
        )
        while True:
            grads, metrics = self._gradients(
                rows,
                actions,
                rewards,
                not_done,
                step_rows,
                operator,
                behaviour,
                kickstart,
                np.float32(self.loss_scale.value),
            )
            grads = [g.numpy() for g in grads]
            if self.loss_scale.update(all(np.all(np.isfinite(g)) for g in grads)):
                break
        _check_finite(grads, self.model.trainable_variables, "computed")
        metrics = {k: float(v) for k, v in metrics.items()}
        scores = [s for t in trajectories for s in t.episode_scores]
        if scores:
            metrics["mean_episode_score"] = float(np.mean(scores))
        metrics.update(steps=float(len(rewards)), episodes=float(len(scores)))
        return grads, metrics

    def _kickstart_weight(self, version: int) -> float:
        """The weight of the teacher's cross-entropy for data of weights ``version`` (the
        updates made before it): ``kickstart``, falling linearly to 0 over
        ``kickstart_updates`` updates where that is set."""
        weight, updates = self.config.kickstart, self.config.kickstart_updates
        return weight * max(0.0, 1.0 - version / updates) if updates else weight

    def _gradients_graph(
        self,
        rows,
        actions,
        rewards,
        not_done,
        step_rows,
        operator,
        behaviour_log_prob,
        kickstart,
        loss_scale,
    ):
        """``rows``: every observation (T + 1 per trajectory); the steps are ``step_rows``.
        ``kickstart``: each step's weight of the teacher's cross-entropy, where the rows
        hold a teacher's choices. The loss is multiplied by ``loss_scale`` for the
        backward pass and the gradients divided by it, so float16 gradients do not
        underflow."""
        with tf.GradientTape() as tape:
            outputs = self._outputs(rows)
            values = tf.stop_gradient(outputs["value"])
            value_now = tf.gather(values, step_rows)
            value_next = tf.gather(values, step_rows + 1)
            at_steps = {k: tf.gather(v, step_rows) for k, v in outputs.items()}
            log_prob, entropy = log_prob_and_entropy(
                at_steps,
                actions,
                tf.gather(rows["available"], step_rows),
                self._uses,
                self.policy.action_set.argument_heads,
            )
            deltas = rewards + self.config.gamma * not_done * value_next - value_now
            returns, advantages, behaviour_log_prob = self._targets(
                deltas, value_now, not_done, step_rows, operator, log_prob, behaviour_log_prob
            )
            loss, metrics = a2c_loss(
                at_steps["value"],
                log_prob,
                entropy,
                returns,
                advantages,
                behaviour_log_prob,
                self.config,
            )
            if "teacher" in rows:
                loss, metrics = _kickstarted(
                    loss,
                    metrics,
                    at_steps["function"],
                    tf.gather(rows["available"], step_rows),
                    tf.gather(rows["teacher"], step_rows),
                    kickstart,
                )
            scaled_loss = loss * loss_scale
        variables = self.model.trainable_variables
        grads = [
            tf.zeros_like(v) if g is None else tf.convert_to_tensor(g) / loss_scale
            for g, v in zip(tape.gradient(scaled_loss, variables), variables)
        ]
        metrics.update(
            grad_norm=tf.linalg.global_norm(grads),
            mean_return=tf.reduce_mean(returns),
            mean_value=tf.reduce_mean(value_now),
        )
        return grads, metrics

    def _row_signature(self) -> dict:
        """The gradient graph's ``rows``: every encoded observation of the batch."""
        spec = self.policy.encoder.spec()
        return {k: tf.TensorSpec((None, *s.shape), s.dtype.name) for k, s in spec.items()}

    def _rows(self, trajectories: Sequence[Trajectory]) -> dict[str, np.ndarray]:
        """The trajectories' observations, T + 1 rows each, one after the other."""
        return {
            k: np.concatenate([t.observations[k] for t in trajectories])
            for k in self.policy.encoder.spec()
        }

    def _outputs(self, rows) -> dict:
        """The network's outputs for every row (in the gradient graph)."""
        return self.model({k: rows[k] for k in self.policy.input_keys}, training=True)

    def _targets(
        self, deltas, value_now, not_done, step_rows, operator, log_prob, behaviour_log_prob
    ):
        """(value targets, advantages, the behaviour log-probs for the policy term's clip)
        from the steps' TD errors: GAE's with ``off_policy: clip``; V-trace's with
        ``vtrace``, whose advantages are already weighted by pi/mu, so the policy term
        takes them as they are (no clip)."""
        if self.config.off_policy == "clip":
            advantages = tf.linalg.matvec(operator, deltas)
            return advantages + value_now, advantages, behaviour_log_prob
        fresh = tf.math.is_nan(behaviour_log_prob)
        log_ratio = tf.stop_gradient(log_prob - tf.where(fresh, log_prob, behaviour_log_prob))
        returns, advantages = vtrace(
            deltas, value_now, not_done, step_rows, operator, log_ratio, self.config.gamma
        )
        return returns, advantages, tf.fill(tf.shape(deltas), np.float32(np.nan))

    def apply_gradients(self, grads: Sequence[np.ndarray], lr_scale: float = 1.0) -> None:
        """One Adam step (after global-norm clipping) at ``lr_scale`` times the learning
        rate; refuses NaN/inf gradients.

        The gradients enter the graph as one flat vector and the rate as an argument: a
        tensor per array and an assignment of the rate around each scaled step cost the
        parameter store, which applies every gradient of a run, more than Adam itself."""
        variables = self.model.trainable_variables
        _check_shapes(grads, variables, "gradient", "were they computed for another config?")
        flat = np.concatenate([np.ravel(g) for g in grads]).astype(np.float32, copy=False)
        if not np.isfinite(flat).all():
            _check_finite(grads, variables, "received")
        self._apply(
            tf.constant(flat), tf.constant(self.config.learning_rate * lr_scale, tf.float32)
        )

    def _adam_step(self, flat, learning_rate):
        """Keras's Adam, with its clipping and its state (the variables a checkpoint
        saves), in one fused kernel per weight array (``ResourceApplyAdam``, the same
        arithmetic) rather than a dozen small ops per array."""
        optimizer, variables = self.optimizer, self.model.trainable_variables
        grads = [tf.reshape(g, v.shape) for g, v in zip(tf.split(flat, self._sizes), variables)]
        grads, _ = tf.clip_by_global_norm(grads, self.config.max_grad_norm)
        step = tf.cast(optimizer.iterations + 1, tf.float32)
        beta_1, beta_2 = float(optimizer.beta_1), float(optimizer.beta_2)
        beta_1_power, beta_2_power = tf.pow(beta_1, step), tf.pow(beta_2, step)
        for grad, variable in zip(grads, variables):
            index = optimizer._get_variable_index(variable)
            tf.raw_ops.ResourceApplyAdam(
                var=variable.value.handle,
                m=optimizer._momentums[index].value.handle,
                v=optimizer._velocities[index].value.handle,
                beta1_power=beta_1_power,
                beta2_power=beta_2_power,
                lr=learning_rate,
                beta1=beta_1,
                beta2=beta_2,
                epsilon=float(optimizer.epsilon),
                grad=grad,
            )
        optimizer.iterations.assign_add(1)

    def get_weights(self) -> list[np.ndarray]:
        return self.policy.get_weights()

    def set_weights(self, weights: Sequence[np.ndarray]) -> None:
        self.policy.set_weights(weights)

    def get_optimizer_state(self) -> list[np.ndarray]:
        """Adam's step count, learning rate and moments, to checkpoint with the weights."""
        return [np.array(v.numpy()) for v in self.optimizer.variables]

    def set_optimizer_state(self, state: Sequence[np.ndarray]) -> None:
        variables = self.optimizer.variables
        if len(state) != len(variables):
            raise ValueError(
                f"Optimizer state has {len(state)} arrays; this learner's "
                f"Adam has {len(variables)} (another config?)"
            )
        for value, variable in zip(state, variables):
            variable.assign(np.asarray(value).reshape(variable.shape))
        # Adam's state holds the rate it was saved with; this run's settings decide it
        # (a warm-up recipe resumes with a new rate).
        self.optimizer.learning_rate.assign(self.config.learning_rate)

    def _check(self, trajectory: Trajectory) -> None:
        n = len(trajectory)
        for key, spec in self.policy.encoder.spec().items():
            got = trajectory.observations.get(key)
            if got is None or got.shape != (n + 1, *spec.shape):
                raise ValueError(
                    f"Trajectory observations[{key!r}] has shape "
                    f"{None if got is None else got.shape}, expected {(n + 1, *spec.shape)} "
                    f"(T + 1 encoded observations; see sc2dask.agents.a2c)"
                )
        for head in self.policy.action_set.heads:
            if head not in trajectory.actions or len(trajectory.actions[head]) != n:
                raise ValueError(f"Trajectory actions[{head!r}] missing or not of length {n}")
        if not np.all(np.isfinite(trajectory.rewards)):
            raise ValueError("Trajectory rewards contain NaN or inf")
        if trajectory.log_probs is not None and np.shape(trajectory.log_probs) != (n,):
            raise ValueError(
                f"Trajectory log_probs has shape {np.shape(trajectory.log_probs)}, "
                f"expected ({n},): one per step, or None"
            )


class LossScale:
    """Keras's dynamic loss scaling (``LossScaleOptimizer``), on the side that computes
    gradients, since here that is often another process than the one that applies them.

    Dynamic (mixed_float16): start at 2**15, halve and recompute when a gradient
    overflows, double after 2000 finite steps in a row. Otherwise the scale stays 1 and a
    non-finite gradient is an error, as before.
    """

    START, GROWTH_STEPS, MINIMUM = 2.0**15, 2000, 1.0

    def __init__(self, dynamic: bool):
        self.dynamic = dynamic
        self.value = self.START if dynamic else 1.0
        self._finite_steps = 0

    def update(self, finite: bool) -> bool:
        """After one computation: True to keep its gradients, False to compute again."""
        if not self.dynamic:
            return True
        if finite:
            self._finite_steps += 1
            if self._finite_steps >= self.GROWTH_STEPS:
                self.value, self._finite_steps = self.value * 2, 0
            return True
        self._finite_steps = 0
        if self.value <= self.MINIMUM:
            return True  # not an overflow of the scale: let _check_finite reject it
        self.value = max(self.value / 2, self.MINIMUM)
        return False


def _check_shapes(arrays, variables, what: str, hint: str) -> None:
    """ValueError naming the first array that does not match its variable's shape."""
    if len(arrays) != len(variables):
        raise ValueError(f"Got {len(arrays)} {what} arrays for a model of {len(variables)}; {hint}")
    for array, variable in zip(arrays, variables):
        if tuple(np.shape(array)) != tuple(variable.shape):
            raise ValueError(
                f"The {what} for {variable.path} has shape {np.shape(array)}, "
                f"expected {tuple(variable.shape)}; {hint}"
            )


def _steps_and_continues(trajectories: Sequence[Trajectory]) -> tuple[np.ndarray, np.ndarray]:
    """Where each step's row is among the observations (each trajectory has one more, its
    bootstrap state), and 1 where the episode goes on after the step, 0 where it ended. A
    trajectory cut short by a crash did not end its episode, so it bootstraps."""
    step_rows, not_done, start = [], [], 0
    for t in trajectories:
        step_rows.append(np.arange(start, start + len(t), dtype=np.int32))
        start += len(t) + 1
        done = np.asarray(t.terminal, bool).copy()
        if t.truncated:
            done[-1] = False
        not_done.append(1.0 - done.astype(np.float32))
    return np.concatenate(step_rows), np.concatenate(not_done)


def _check_finite(grads, variables, what: str) -> None:
    bad = [v.path for g, v in zip(grads, variables) if not np.all(np.isfinite(g))]
    if bad:
        raise NonFiniteGradients(
            f"Rejected {what} gradients: NaN or inf in {len(bad)} of "
            f"{len(grads)} arrays ({', '.join(bad[:3])}{', ...' if len(bad) > 3 else ''}). "
            f"Lower the learning rate or check the rewards and observations."
        )
