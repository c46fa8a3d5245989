"""The ``host`` fixture: one emulator process per test module, for the protocol tests."""

import pytest

from tests.emulator.checked_client import EmulatorHost


@pytest.fixture(scope="module")
def host():
    server = EmulatorHost()
    yield server
    server.close()
