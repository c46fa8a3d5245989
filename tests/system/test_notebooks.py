"""Every notebook in notebooks/ runs top to bottom (papermill), with small parameters.

Each notebook's first code cell is tagged ``parameters``; the values below replace those a
notebook declares (others are left alone), so a new notebook only has to use these names
for its sizes to be tested quickly. The kernel is this interpreter (jupyter_client starts
``python`` kernels with ``sys.executable``).
"""

import contextlib
import re
import time
from pathlib import Path

import nbformat
import papermill
import psutil
import pytest

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))
SMALL = {
    "N_WORKERS": 2,
    "WORKERS": 2,
    "SC2_PER_WORKER": 1,
    "ENVS": 2,
    "EPISODES": 2,
    "EVAL_EPISODES": 1,
    "SCREEN": 16,
    "MAX_STEPS": 96,
    "RESUME_STEPS": 48,
}


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(notebook, tmp_path, sc2path):
    started = time.time()
    declared = papermill.inspect_notebook(str(notebook))
    assert declared, f"{notebook.name} has no code cell tagged 'parameters'"
    assignments = re.findall(r"^(\w+)\s*=", _parameters_cell(notebook), re.MULTILINE)
    assert set(assignments) <= set(declared), (
        f"papermill cannot parse {set(assignments) - set(declared)} in {notebook.name}'s "
        f"parameters cell (one plain `NAME = value  # comment` per line)"
    )
    parameters = {name: value for name, value in SMALL.items() if name in declared}
    try:
        papermill.execute_notebook(
            str(notebook),
            str(tmp_path / notebook.name),
            parameters=parameters,
            cwd=str(tmp_path),
            kernel_name="python3",
            progress_bar=False,
            execution_timeout=300,
        )
    except papermill.PapermillExecutionError as err:  # the failing cell's own error
        pytest.fail(
            f"{notebook.name}, cell {err.cell_index}:\n{err.source}\n\n"
            f"{err.ename}: {err.evalue}\n{''.join(err.traceback)[-3000:]}",
            pytrace=False,
        )
    finally:
        left = _left_behind(sc2path, started)
    assert not left, f"{notebook.name} left processes running (now killed): {left}"


def _left_behind(sc2path, since: float, grace: float = 15.0) -> list[str]:
    """Kill and name what the notebook started and left running: its kernel, workers and
    games carry this session's SC2PATH and started after ``since``."""

    def ours():
        found = []
        for process in psutil.process_iter(["create_time"]):
            with contextlib.suppress(psutil.Error):
                if process.info["create_time"] >= since - 1 and process.environ().get(
                    "SC2PATH"
                ) == str(sc2path):
                    found.append(process)
        return found

    names = []
    for process in psutil.wait_procs(ours(), timeout=grace)[1]:
        with contextlib.suppress(psutil.Error):
            names.append(" ".join(process.cmdline()[:4]))
            process.kill()
    return names


def _parameters_cell(notebook: Path) -> str:
    cells = nbformat.read(notebook, as_version=4).cells
    return next(c.source for c in cells if "parameters" in c.metadata.get("tags", []))


def test_notebooks_are_found():
    assert {"01-quickstart", "02-train-a2c", "03-cluster"} <= {p.stem for p in NOTEBOOKS}
