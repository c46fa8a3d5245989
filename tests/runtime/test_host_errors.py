"""An error raised in an env host reaches the client as one it can read: a run that cannot
read a call's error would wait on it for ever."""

import pickle

import pytest

from sc2dask.errors import HostError
from sc2dask.runtime.env_host import portable
from tests.cli.test_cli import _run
from tests.runtime.failing_agent import LockedError


def test_an_error_that_pickles_is_kept_and_one_that_does_not_is_named():
    class NeedsTwoArguments(Exception):
        """pysc2's RequestError as pickle alone sees it (made here, after anything that
        teaches pickle about the exceptions that exist, as tblib does): its pickle calls it
        with one argument."""

        def __init__(self, description, res):
            super().__init__(description)
            self.res = res

    kept = ValueError("bad value")
    assert portable(kept) is kept
    for error in (LockedError("locked"), NeedsTwoArguments("refused", res=None)):
        carried = portable(error)
        assert isinstance(carried, HostError)
        assert type(error).__name__ in str(carried) and str(error) in str(carried)
        assert isinstance(pickle.loads(pickle.dumps(carried)), HostError)


@pytest.mark.cluster
@pytest.mark.usefixtures("sc2path")
def test_an_error_that_does_not_pickle_ends_evaluate_with_one_line(tmp_path):
    done = _run(
        ["evaluate", "--agent", "tests.runtime.failing_agent.RaisesLockedError"]
        + ["--episodes", "1", "--envs", "1"],
        tmp_path,
        timeout=180,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-3000:]
    assert len(lines) == 1 and "LockedError" in lines[0] and "cannot go on" in lines[0], lines
