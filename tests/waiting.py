"""Waiting in tests for something another process makes true."""

import time


def wait_until(
    condition, timeout: float = 300.0, what: str = "the condition", interval: float = 0.5
):
    """Poll ``condition()`` until it returns something truthy, and return that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
