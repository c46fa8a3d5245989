"""Whether an agent's parts take the calls sc2dask makes of them (``sc2dask.core``'s
protocols), checked as each part is built.

A method that is missing or takes other arguments than the framework passes would
otherwise fail deep inside a run, on a worker, as a traceback; here it is one
``ConfigError`` naming the method, the call it must take and the protocol, which the CLI
prints as one line with exit code 2. Each call is the framework's own, bound against the
method's signature (nothing is called).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError

DOCS = "docs/agents.md"

# The calls sc2dask makes, as (positional arguments, keyword arguments) to bind.
AGENT_CALLS: Mapping[str, tuple[tuple, dict]] = {
    "make_policy": (("obs_spec",), {}),
    "make_learner": (("obs_spec",), {}),
}
POLICY_CALLS: Mapping[str, tuple[tuple, dict]] = {
    "initial_state": ((1,), {}),
    "act": (("batch", "rng", "state"), {}),
    "get_weights": ((), {}),
    "set_weights": (("weights",), {}),
}
LEARNER_CALLS: Mapping[str, tuple[tuple, dict]] = {
    "compute_gradients": (("trajectories",), {}),
    "apply_gradients": (("grads",), {"lr_scale": 1.0}),
    "get_weights": ((), {}),
    "set_weights": (("weights",), {}),
    "get_optimizer_state": ((), {}),
    "set_optimizer_state": (("state",), {}),
}
# Optional: checked where present (``core.PreparesAhead``, ``core.SplitsHeads``; the
# heads are needed only where layered sync sends them apart, ``check_layered_sync``).
OPTIONAL_LEARNER_CALLS = {"prepare": ((), {"gradients": True, "apply": True})}
OPTIONAL_POLICY_CALLS = {"head_weights": ((), {})}
ENCODER_CALLS = {"encode": (("observation",), {}), "encode_batch": (("observations",), {})}


def check_agent_class(agent_class: type, path: str) -> None:
    """The class's constructor takes its config, and its factories an observation spec."""
    owner = f"agent-class {path!r}"
    _check_call(agent_class, "__init__", ("config",), {}, owner, "Agent")  # its constructor
    for name, (args, kwargs) in AGENT_CALLS.items():
        static = inspect.getattr_static(agent_class, name, None)
        takes_self = not isinstance(static, staticmethod | classmethod)
        method = getattr(agent_class, name, None)
        _check_call(method, name, ("self", *args) if takes_self else args, kwargs, owner, "Agent")


def check_policy(policy: Any, path: str) -> None:
    """A policy takes every call an env host makes of it, and has what hosts read."""
    owner = f"agent-class {path!r}: its policy ({type(policy).__name__})"
    _check_calls(policy, POLICY_CALLS, owner, "Policy")
    _check_calls(policy, OPTIONAL_POLICY_CALLS, owner, "SplitsHeads", optional=True)
    encoder = getattr(policy, "encoder", None)
    if encoder is None or not isinstance(getattr(policy, "obs_spec", None), Mapping):
        missing = "encoder" if encoder is None else "obs_spec (a dict)"
        raise ConfigError(f"{owner} has no {missing}; follow sc2dask.core.Policy ({DOCS}).")
    _check_calls(encoder, ENCODER_CALLS, f"{owner}: its encoder", "Encoder")


def check_learner(learner: Any, path: str) -> None:
    """A learner, and the policy it owns, take every call the client and hosts make."""
    owner = f"agent-class {path!r}: its learner ({type(learner).__name__})"
    _check_calls(learner, LEARNER_CALLS, owner, "Learner")
    _check_calls(learner, OPTIONAL_LEARNER_CALLS, owner, "PreparesAhead", optional=True)
    if getattr(learner, "policy", None) is None:
        raise ConfigError(f"{owner} has no policy attribute; follow sc2dask.core.Learner ({DOCS}).")
    check_policy(learner.policy, path)


def check_layered_sync(policy: Any, path: str, layered_sync: int) -> None:
    """Layered sync sends the heads apart from the rest: it needs ``head_weights``."""
    if layered_sync > 1 and not callable(getattr(policy, "head_weights", None)):
        raise ConfigError(
            f"layered-sync {layered_sync} sends a policy's heads apart from its other "
            f"weights, and agent-class {path!r}'s policy has no head_weights(); add it "
            f"(sc2dask.core.SplitsHeads), or set layered-sync 1."
        )


def _check_calls(obj, calls, owner: str, protocol: str, optional: bool = False) -> None:
    for name, (args, kwargs) in calls.items():
        method = getattr(obj, name, None)
        if method is None and optional:
            continue
        _check_call(method, name, args, kwargs, owner, protocol)


def _check_call(method, name: str, args: tuple, kwargs: dict, owner: str, protocol: str) -> None:
    call = ", ".join([*map(str, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
    if not callable(method):
        raise ConfigError(
            f"{owner} has no method {name}({call}); follow sc2dask.core.{protocol} ({DOCS})."
        )
    try:
        signature = inspect.signature(method)
    except (TypeError, ValueError):  # a builtin without a signature: it cannot be checked
        return
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise ConfigError(
            f"{owner}: {name}{signature} cannot take sc2dask's call {name}({call}) "
            f"({exc}); follow sc2dask.core.{protocol} ({DOCS})."
        ) from None
