"""The emulator install pysc2 launches, how sc2dask picks real vs emulated game, and the CLI on top."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sc2dask import cli
from sc2dask.emulator.install import EXECUTABLE, LAUNCHERS, MARKER, is_emulator_install
from sc2dask.errors import GameNotFoundError, UnknownMapError
from sc2dask.game import find_game, install_emulator, make_env
from sc2dask.game.pysc2lib import MAPS_DIR, actions, maps, run_configs


@pytest.fixture
def env(monkeypatch, tmp_path):
    """No SC2PATH and an empty home; any SC2PATH a test sets is undone afterwards."""
    monkeypatch.setenv("SC2PATH", "placeholder")  # Records the old value for teardown...
    monkeypatch.delenv("SC2PATH")  # ...which also undoes what find_game() sets.
    monkeypatch.delenv("SC2DASK_EMULATOR_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return monkeypatch


def fake_real_game(directory: Path) -> Path:
    binary = directory / "Versions" / "Base75689" / "SC2_x64"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\x7fELF" + bytes(4096))
    binary.chmod(0o755)
    return directory


# --- install_emulator() -------------------------------------------------------------------------


def test_layout_passes_pysc2s_own_run_config(env, tmp_path):
    root = install_emulator(tmp_path / "StarCraftII")
    env.setenv("SC2PATH", str(root))
    run_config = run_configs.get()
    assert run_config.data_dir == str(root)
    assert {"latest", "4.10.0"} <= set(run_config.get_versions())
    exec_path = Path(
        run_config.data_dir, f"Versions/Base{run_config.version.build_version:05d}", "SC2_x64"
    )
    assert exec_path.is_file() and os.access(exec_path, os.X_OK)
    shipped = Path(MAPS_DIR, "mini_games", "MoveToBeacon.SC2Map").read_bytes()
    assert maps.get("MoveToBeacon").data(run_config) == shipped
    assert Path(run_config.replay_dir).is_dir() and (root / "Libs").is_dir()


def test_launcher_execs_this_hosts_python_with_the_emulator(tmp_path):
    root = install_emulator(tmp_path)
    launcher = root / EXECUTABLE
    script = launcher.read_text()
    assert script.startswith("#!/bin/sh\n") and MARKER in script
    assert sys.executable not in script  # the same on every node of a shared folder
    mine = (root / LAUNCHERS / f"{socket.gethostname()}.sh").read_text()
    assert (
        f"exec {sys.executable} -m sc2dask.emulator -quiet -exitWithParent "
        f'"${{SC2DASK_GAME_PARENT:-$PPID}}" "$@"' in mine
    )
    help_text = subprocess.run(
        [str(launcher), "-h"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert "-listen" in help_text and "-port" in help_text


def test_a_folder_shared_by_nodes_keeps_each_hosts_launcher(tmp_path):
    root = install_emulator(tmp_path)
    other = root / LAUNCHERS / "node-with-another-python.sh"
    other.write_text('#!/bin/sh\nexec /elsewhere/python -m sc2dask.emulator "$@"\n')
    install_emulator(tmp_path)
    assert "/elsewhere/python" in other.read_text()  # another node's is left alone
    (root / LAUNCHERS / f"{socket.gethostname()}.sh").unlink()
    done = subprocess.run(
        [str(root / EXECUTABLE), "-h"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and "no launcher for host" in done.stderr
    assert "sc2dask emulator install" in done.stderr


def test_install_refuses_to_overwrite_a_real_game_binary(tmp_path):
    binary = tmp_path / EXECUTABLE
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\x7fELF" + bytes(1000))  # what a real SC2_x64 starts with
    with pytest.raises(FileExistsError, match="is a StarCraft II binary"):
        install_emulator(tmp_path)
    assert binary.read_bytes().startswith(b"\x7fELF")


def test_install_is_idempotent_and_repairs_stale_parts(tmp_path):
    root = install_emulator(tmp_path)
    launcher, link = root / LAUNCHERS / f"{socket.gethostname()}.sh", root / "Maps" / "mini_games"
    first = launcher.stat().st_mtime_ns
    assert install_emulator(tmp_path) == root and launcher.stat().st_mtime_ns == first
    launcher.write_text(
        f'#!/bin/sh\n{MARKER}\nexec /old/venv/bin/python -m sc2dask.emulator "$@"\n'
    )
    link.unlink()
    link.symlink_to(tmp_path / "elsewhere")
    install_emulator(tmp_path)
    assert sys.executable in launcher.read_text() and os.access(launcher, os.X_OK)
    assert link.resolve() == Path(MAPS_DIR, "mini_games").resolve()


def test_maps_are_copied_where_symlinks_fail(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("symlinks not supported here")

    monkeypatch.setattr(Path, "symlink_to", refuse)
    link = install_emulator(tmp_path) / "Maps" / "mini_games"
    assert link.is_dir() and not link.is_symlink()
    shipped = sorted(p.name for p in Path(MAPS_DIR, "mini_games").glob("*.SC2Map"))
    assert shipped and sorted(p.name for p in link.glob("*.SC2Map")) == shipped
    install_emulator(tmp_path)  # A copy is kept and refreshed, not replaced.
    assert not link.is_symlink()


def test_is_emulator_install_tells_the_launcher_from_a_real_game(tmp_path):
    assert is_emulator_install(install_emulator(tmp_path / "emulator"))
    assert not is_emulator_install(fake_real_game(tmp_path / "real"))
    assert not is_emulator_install(tmp_path / "missing")


# --- find_game() and make_env() --------------------------------------------------------


def test_emulator_is_laid_out_when_no_game_is_installed(env, tmp_path):
    env.setenv("SC2DASK_EMULATOR_DIR", str(tmp_path / "emu"))
    game = find_game()
    assert (game.kind, game.path) == ("emulator", tmp_path / "emu")
    assert os.environ["SC2PATH"] == str(tmp_path / "emu")
    assert is_emulator_install(game.path)
    assert "no StarCraft II install found at" in game.summary
    assert find_game() == game  # Now found through SC2PATH.


def test_emulator_default_dir_is_in_the_user_cache(env, tmp_path):
    game = find_game()
    assert game.path == tmp_path / "home" / ".cache" / "sc2dask" / "StarCraftII"


@pytest.mark.parametrize("use_sc2path", [True, False])
def test_a_real_game_wins(env, tmp_path, use_sc2path):
    if use_sc2path:
        real = fake_real_game(tmp_path / "game")
        env.setenv("SC2PATH", str(real))
    else:
        real = fake_real_game(tmp_path / "home" / "StarCraftII")
    game = find_game()
    assert (game.kind, game.path) == ("real", real)
    assert game.summary == f"Using StarCraft II at {real}"
    assert os.environ["SC2PATH"] == str(real)


@pytest.mark.parametrize("make", [lambda p: p, lambda p: p.mkdir() or p])
def test_an_sc2path_without_a_game_is_an_error_naming_the_fix(env, tmp_path, make):
    bad = make(tmp_path / "nothing")
    env.setenv("SC2PATH", str(bad))
    with pytest.raises(GameNotFoundError, match=f"SC2PATH={bad} .*Unset SC2PATH"):
        find_game()


def test_make_env_names_the_maps_for_an_unknown_map(env, tmp_path):
    env.setenv("SC2PATH", str(install_emulator(tmp_path)))
    with pytest.raises(UnknownMapError, match="MoveToBeacon"):
        make_env("NoSuchMap")
    with pytest.raises(UnknownMapError, match="emulator cannot play 'Flat64'"):
        make_env("Flat64")  # a melee map it does not emulate


def test_make_env_plays_the_emulator_with_the_defaults(env, tmp_path):
    env.setenv("SC2DASK_EMULATOR_DIR", str(tmp_path / "emu"))
    with make_env("MoveToBeacon") as sc2:
        timestep = sc2.reset()[0]
        assert timestep.observation.feature_screen.shape[1:] == (64, 64)
        assert timestep.observation.feature_minimap.shape[1:] == (64, 64)
        timestep = sc2.step([actions.FUNCTIONS.no_op()])[0]
        assert timestep.observation.game_loop[0] == 8  # step_mul


# --- the command line ------------------------------------------------------------------


def test_cli_emulator_install_prints_the_export_line(tmp_path, capsys):
    assert cli.main(["emulator", "install", str(tmp_path / "sc2")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [str(tmp_path / "sc2"), f"export SC2PATH={tmp_path / 'sc2'}"]
    assert is_emulator_install(tmp_path / "sc2")


def test_cli_reports_user_errors_without_a_traceback(env, tmp_path, capsys):
    env.setenv("SC2PATH", str(tmp_path / "missing"))
    assert cli.main(["demo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: SC2PATH=") and "Traceback" not in err


def test_cli_demo_plays_and_prints_scores(env, tmp_path, capsys):
    env.setenv("SC2DASK_EMULATOR_DIR", str(tmp_path / "emu"))
    assert cli.main(["demo", "--map", "MoveToBeacon", "--episodes", "1"]) == 0
    out = capsys.readouterr().out
    assert "Using the sc2dask emulator at" in out
    assert "episode 1: score" in out and "mean score over 1 episodes" in out
