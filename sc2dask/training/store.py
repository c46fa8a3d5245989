"""``ParameterStore``: the run's versioned weights and optimizer state, on the client."""

from __future__ import annotations

import logging
import threading

import numpy as np

from ..core import Learner, NonFiniteGradients

log = logging.getLogger(__name__)


class ParameterStore:
    """Versioned weights and optimizer state, held by a ``Learner``.

    Sender threads read the weights while the loop applies updates, so reads and
    updates take one lock and a version is never paired with half-applied weights.
    """

    def __init__(self, learner: Learner):
        self.learner = learner
        self.version = 0
        self.rejected = 0
        self._lock = threading.Lock()
        self._read: list[np.ndarray] | None = None  # this version's weights, read once

    def weights(self) -> list[np.ndarray]:
        return self.snapshot()[1]

    def snapshot(self) -> tuple[int, list[np.ndarray]]:
        """(version, weights), consistent with each other.

        Every host given work at one version gets the same arrays, read from the model
        once and read-only, so sharing them is safe.
        """
        with self._lock:
            if self._read is None:
                self._read = self.learner.get_weights()
                for array in self._read:
                    array.setflags(write=False)
            return self.version, self._read

    def apply(self, grads, lr_scale: float = 1.0) -> bool:
        """One optimizer step; NaN/inf gradients are rejected (logged), returning False."""
        with self._lock:
            try:
                self.learner.apply_gradients(grads, lr_scale=lr_scale)
            except NonFiniteGradients as exc:
                self.reject(exc)
                return False
            self.version += 1
            self._read = None
            return True

    def reject(self, reason) -> None:
        """Count gradients not applied for NaN or inf (here, on the client's learner or on
        a host)."""
        self.rejected += 1
        log.warning("gradient rejected: %s", reason)

    def restore(self, weights, optimizer_state, version: int) -> None:
        """Weights, optimizer state and version from a checkpoint (ValueError: other config)."""
        with self._lock:
            self.learner.set_weights(weights)
            self.learner.set_optimizer_state(optimizer_state)
            self.version = version
            self._read = None
