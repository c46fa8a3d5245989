"""Settings: one typed source, checked values, and flag > --config file > environment > default."""

import dataclasses
import json
import os

import dask
import pytest
import yaml

from sc2dask import settings
from sc2dask.cli import main, parser
from sc2dask.cli.flags import given
from sc2dask.errors import ConfigError

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def clean_config(monkeypatch):
    """Each test starts from the package defaults, with no DASK_SC2DASK__ variable set."""
    for name in [n for n in os.environ if n.startswith("DASK_SC2DASK")]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(settings, "_FILES", {s: {} for s in settings.SECTIONS})
    dask.config.refresh()
    yield monkeypatch
    monkeypatch.undo()
    dask.config.refresh()


def _env(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    dask.config.refresh()


def test_every_yaml_key_is_a_typed_field_and_every_field_a_yaml_key():
    yaml_file = yaml.safe_load(settings.DEFAULTS_FILE.read_text())["sc2dask"]
    assert set(yaml_file) == {*settings.SECTIONS, settings.MAP_DEFAULTS}
    for name, cls in settings.SECTIONS.items():
        fields = {f.name.replace("_", "-") for f in dataclasses.fields(cls)}
        assert fields == set(yaml_file[name]), name
        assert all("rule" in f.metadata for f in dataclasses.fields(cls))
    for map_name, sections in yaml_file[settings.MAP_DEFAULTS].items():
        for name, values in sections.items():
            fields = {f.name.replace("_", "-") for f in dataclasses.fields(settings.SECTIONS[name])}
            assert set(values) <= fields, (map_name, name)
            settings.load(settings.SECTIONS[name], map_name=map_name)  # values in range


def test_defaults_load_with_their_types():
    loaded = settings.load(settings.TrainSettings)
    assert loaded.values.mode == "central" and loaded.values.envs is None
    assert isinstance(loaded.values.call_timeout, float)
    assert set(loaded.origins.values()) == {settings.DEFAULT_ORIGIN}


def test_a_bad_type_in_an_environment_variable_names_the_variable(clean_config):
    _env(clean_config, "DASK_SC2DASK__AGENT__LEARNING_RATE", "abc")
    with pytest.raises(
        ConfigError,
        match=r"sc2dask.agent.learning-rate must be a number > 0, "
        r"not 'abc' \(from environment variable "
        r"DASK_SC2DASK__AGENT__LEARNING_RATE\)",
    ):
        settings.load(settings.AgentSettings)


@pytest.mark.parametrize(
    "section, key, value, message",
    [
        (settings.TrainSettings, "rollout_steps", 0, "rollout-steps must be >= 1"),
        (settings.TrainSettings, "max_staleness", -1, "max-staleness must be >= 0"),
        (settings.TrainSettings, "sync_gradients", 0, "sync-gradients must be >= 1"),
        (settings.TrainSettings, "envs", 0, "envs must be >= 1"),
        (settings.TrainSettings, "mode", "sideways", "mode must be one of central, sync, async"),
        (settings.AgentSettings, "learning_rate", 0.0, "learning-rate must be > 0"),
        (settings.AgentSettings, "gamma", 0.0, "gamma must be > 0 and <= 1"),
        (settings.AgentSettings, "gamma", 1.5, "gamma must be > 0 and <= 1"),
        (settings.AgentSettings, "screen", 0, "screen must be >= 1 and <= 1024"),
        (settings.AgentSettings, "screen", 2048, "screen must be >= 1 and <= 1024"),
        (settings.AgentSettings, "screen", 16.5, "screen must be a whole number"),
        (settings.AgentSettings, "normalize_advantages", "maybe", "must be true or false"),
    ],
)
def test_out_of_range_values_name_the_setting_and_the_range(section, key, value, message):
    with pytest.raises(ConfigError, match=message):
        settings.load(section, {key: value})


def test_edges_of_the_ranges_are_allowed():
    agent = settings.load(settings.AgentSettings, {"gamma": 1, "screen": 1024}).values
    assert agent.gamma == 1.0 and isinstance(agent.gamma, float) and agent.screen == 1024
    train = settings.load(settings.TrainSettings, {"max_staleness": 0, "envs": 1}).values
    assert train.max_staleness == 0 and train.envs == 1


def test_a_map_has_its_own_defaults_under_any_setting_a_user_gives(clean_config):
    beacon = settings.load(settings.AgentSettings, map_name="MoveToBeacon")
    assert beacon.values.action_set == "move"
    assert beacon.origins["action_set"] == "default for MoveToBeacon (sc2dask.maps)"
    assert beacon.origins["screen"] == settings.DEFAULT_ORIGIN
    other = settings.load(settings.AgentSettings, map_name="DefeatRoaches")
    assert other.values.action_set == "attack" and other.values.screen == 32
    assert other.origins["action_set"] == "default for DefeatRoaches (sc2dask.maps)"
    assert settings.load(settings.AgentSettings).values.action_set == "minigames"
    flag = settings.load(
        settings.AgentSettings, {"action_set": "all"}, "command line", map_name="MoveToBeacon"
    )
    assert flag.values.action_set == "all" and flag.origins["action_set"] == "command line"
    _env(clean_config, "DASK_SC2DASK__AGENT__ACTION_SET", "minigames")
    env = settings.load(settings.AgentSettings, map_name="MoveToBeacon")
    assert env.values.action_set == "minigames"
    assert env.origins["action_set"].startswith("environment variable")


def test_a_melee_map_trains_on_its_value_unless_told_otherwise(clean_config, sc2path):
    from sc2dask.training.run_settings import resolve_run

    melee = {"map": "Simple64", "opponent": "bot:terran:very_easy"}
    assert resolve_run(melee).env_config.reward == "value"
    assert resolve_run(melee).env_config.score_scale == 0.0001  # the map's, not the 0.001
    assert resolve_run(melee | {"reward": "both"}).env_config.reward == "both"
    assert resolve_run({"map": "MoveToBeacon"}).env_config.reward == "score"
    _env(clean_config, "DASK_SC2DASK__TRAIN__REWARD", "both")
    assert resolve_run(melee).env_config.reward == "both"


def test_the_macro_action_set_is_terrans_and_refuses_another_race(clean_config, sc2path):
    from sc2dask.training.run_settings import resolve_run

    melee = {"map": "Simple64", "opponent": "bot:terran:very_easy", "race": "zerg"}
    with pytest.raises(ConfigError, match="Terran's macros.*--race terran"):
        resolve_run(melee)


def test_a_dask_config_file_wins_over_a_maps_default_even_with_the_packages_value(
    clean_config, sc2path, tmp_path
):
    from sc2dask.training.run_settings import resolve_run

    (tmp_path / "mine.yaml").write_text("sc2dask:\n  train:\n    reward: score\n")
    paths = [*dask.config.paths, str(tmp_path)]  # as $DASK_CONFIG adds a folder
    clean_config.setattr(dask.config, "paths", paths)
    dask.config.refresh(paths=paths)
    run = resolve_run({"map": "Simple64", "opponent": "bot:terran:very_easy"})
    assert run.env_config.reward == "score"


def test_unknown_keys_suggest_the_close_one(clean_config):
    with pytest.raises(ConfigError, match="Did you mean 'max-steps'"):
        settings.load(settings.TrainSettings, {"max_step": 10})
    _env(clean_config, "DASK_SC2DASK__AGENT__LEARNIN_RATE", "0.1")
    with pytest.raises(ConfigError, match="sc2dask.agent.learnin-rate.*'learning-rate'"):
        settings.load(settings.AgentSettings)


@pytest.mark.parametrize("name", ["COMPRESSION", "SYNC_LR_SCALING"])
def test_none_from_the_environment_is_the_choice_none(clean_config, name):
    """dask reads DASK_...=none as None; for a choice that has 'none' it is that choice."""
    _env(clean_config, f"DASK_SC2DASK__TRAIN__{name}", "none")
    loaded = settings.load(settings.TrainSettings)
    assert getattr(loaded.values, name.lower()) == "none"
    assert loaded.origins[name.lower()] == f"environment variable DASK_SC2DASK__TRAIN__{name}"


def test_a_train_flag_left_out_does_not_override_the_environment(clean_config):
    """The old bug: `sc2dask train` always passed --mode central."""
    _env(clean_config, "DASK_SC2DASK__TRAIN__MODE", "sync")
    args = parser().parse_args(["train", "--map", "MoveToBeacon", "--envs", "2"])
    flags = given(args, args.train_fields)
    assert flags == {"map": "MoveToBeacon", "envs": 2}
    loaded = settings.load(settings.TrainSettings, flags, origin="command line")
    assert loaded.values.mode == "sync"
    assert loaded.origins["mode"] == "environment variable DASK_SC2DASK__TRAIN__MODE"
    assert loaded.origins["envs"] == "command line"


def test_precedence_flag_then_config_file_then_environment_then_default(clean_config, tmp_path):
    _env(clean_config, "DASK_SC2DASK__TRAIN__MODE", "async")
    _env(clean_config, "DASK_SC2DASK__TRAIN__ROLLOUT_STEPS", "4")
    _env(clean_config, "DASK_SC2DASK__AGENT__GAMMA", "0.9")
    file = tmp_path / "run.yaml"
    file.write_text(
        "sc2dask:\n  train:\n    mode: sync\n    rollout-steps: 8\n"
        "  agent:\n    learning-rate: 0.002\n"
    )
    settings.use_file(file)
    train = settings.load(settings.TrainSettings, {"rollout_steps": 32}, origin="command line")
    assert train.values.rollout_steps == 32 and train.origins["rollout_steps"] == "command line"
    assert train.values.mode == "sync" and train.origins["mode"] == str(file)
    assert train.values.max_steps == 100_000
    assert train.origins["max_steps"] == settings.DEFAULT_ORIGIN
    agent = settings.load(settings.AgentSettings)
    assert agent.values.learning_rate == 0.002 and agent.origins["learning_rate"] == str(file)
    assert agent.values.gamma == 0.9
    assert agent.origins["gamma"] == "environment variable DASK_SC2DASK__AGENT__GAMMA"


def test_config_show_prints_each_value_and_its_origin(clean_config, tmp_path, capsys):
    _env(clean_config, "DASK_SC2DASK__TRAIN__MODE", "sync")
    file = tmp_path / "run.yaml"
    file.write_text("sc2dask:\n  agent:\n    screen: 16\n")
    assert main(["config", "show", "--config", str(file), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["train"]["mode"] == {
        "value": "sync",
        "from": "environment variable DASK_SC2DASK__TRAIN__MODE",
    }
    assert shown["agent"]["screen"] == {"value": 16, "from": str(file)}
    assert shown["evaluate"]["episodes"]["from"] == settings.DEFAULT_ORIGIN
    assert main(["config", "show"]) == 0
    table = capsys.readouterr().out
    assert "sc2dask.train.mode" in table and "sync" in table


@pytest.mark.parametrize(
    "content, message",
    [
        ("train:\n  mode: sync\n", "must hold a mapping under 'sc2dask:'"),
        ("sc2dask:\n  trainer:\n    mode: sync\n", "unknown section sc2dask.trainer"),
        ("sc2dask: [1, 2\n", "is not valid YAML"),
    ],
)
def test_a_bad_config_file_is_a_clear_error(tmp_path, content, message, capsys):
    file = tmp_path / "bad.yaml"
    file.write_text(content)
    assert main(["config", "show", "--config", str(file)]) == 2
    assert message in capsys.readouterr().err
    assert main(["config", "show", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert "Cannot read --config" in capsys.readouterr().err


def test_every_setting_is_a_flag_of_train_and_listed_in_its_help():
    text = parser()._subparsers._group_actions[0].choices["train"].format_help()
    for cls in (settings.TrainSettings, settings.AgentSettings):
        for field in dataclasses.fields(cls):
            assert f"--{field.name.replace('_', '-')}" in text, field.name
    assert "--config" in text


def test_flags_parse_to_the_settings_types():
    args = parser().parse_args(
        [
            "train",
            "--learning-rate",
            "0.001",
            "--screen",
            "16",
            "--no-normalize-advantages",
            "--mode",
            "async",
        ]
    )
    assert given(args, args.agent_fields) == {
        "learning_rate": 0.001,
        "screen": 16,
        "normalize_advantages": False,
    }
    assert given(args, args.train_fields) == {"mode": "async"}
    with pytest.raises(SystemExit) as exit_:
        parser().parse_args(["train", "--screen", "big"])
    assert exit_.value.code == 2


def test_feature_layers_are_lists_from_yaml_flags_and_the_environment(clean_config):
    loaded = settings.load(settings.AgentSettings).values
    assert isinstance(loaded.screen_layers, tuple) and "player_relative" in loaded.screen_layers
    beacon = settings.load(settings.AgentSettings, map_name="MoveToBeacon").values
    assert beacon.minimap_layers == ()  # the map's own default: no minimap tower
    _env(clean_config, "DASK_SC2DASK__AGENT__SCREEN_LAYERS", "player_relative, selected")
    assert settings.load(settings.AgentSettings).values.screen_layers == (
        "player_relative",
        "selected",
    )
    args = parser().parse_args(["train", "--minimap-layers", "camera,selected"])
    assert settings.load(
        settings.AgentSettings, given(args, args.agent_fields), "flag"
    ).values.minimap_layers == ("camera", "selected")
    with pytest.raises(ConfigError, match="screen-layers must be a list of names.*7"):
        settings.load(settings.AgentSettings, {"screen_layers": 7})


def test_conv_filters_are_whole_numbers_from_yaml_flags_and_the_environment(clean_config):
    assert settings.load(settings.AgentSettings).values.conv_filters == (16, 32)
    _env(clean_config, "DASK_SC2DASK__AGENT__CONV_FILTERS", "8, 24")
    assert settings.load(settings.AgentSettings).values.conv_filters == (8, 24)
    args = parser().parse_args(["train", "--conv-filters", "16,16", "--dense-grid", "4"])
    loaded = settings.load(settings.AgentSettings, given(args, args.agent_fields), "flag")
    assert (loaded.values.conv_filters, loaded.values.dense_grid) == ((16, 16), 4)
    with pytest.raises(ConfigError, match="conv-filters must be a list of whole numbers.*x"):
        settings.load(settings.AgentSettings, {"conv_filters": "16,x"})
    with pytest.raises(ConfigError, match="conv-filters .*two filter counts.*not 16$"):
        settings.load(settings.AgentSettings, {"conv_filters": [16]})
    with pytest.raises(ConfigError, match="conv-filters .*two filter counts.*not 16,0$"):
        settings.load(settings.AgentSettings, {"conv_filters": [16, 0]})
    with pytest.raises(ConfigError, match="dense-grid must be >= 1, not 0"):
        settings.load(settings.AgentSettings, {"dense_grid": 0})


def test_conv_kernels_are_two_odd_sizes(clean_config):
    assert settings.load(settings.AgentSettings).values.conv_kernels == (5, 3)
    args = parser().parse_args(["train", "--conv-kernels", "3,3"])
    loaded = settings.load(settings.AgentSettings, given(args, args.agent_fields), "flag")
    assert loaded.values.conv_kernels == (3, 3)
    for bad, shown in (([4, 3], "4,3"), ([3], "3"), ([3, 3, 3], "3,3,3"), ([-1, 3], "-1,3")):
        with pytest.raises(ConfigError, match=f"conv-kernels .*two odd kernel sizes.*not {shown}$"):
            settings.load(settings.AgentSettings, {"conv_kernels": bad})


def test_spatial_dilations_are_rates_of_at_least_one_or_none(clean_config):
    assert settings.load(settings.AgentSettings).values.spatial_dilations == ()
    args = parser().parse_args(["train", "--spatial-dilations", "2,4,8"])
    loaded = settings.load(settings.AgentSettings, given(args, args.agent_fields), "flag")
    assert loaded.values.spatial_dilations == (2, 4, 8)
    with pytest.raises(ConfigError, match="spatial-dilations .*at least 1.*not 2,0$"):
        settings.load(settings.AgentSettings, {"spatial_dilations": [2, 0]})


def test_bad_values_from_python_are_named_errors_before_any_cluster():
    import sc2dask

    with pytest.raises(ConfigError, match="sc2dask.evaluate.episodes must be >= 1, not 0"):
        sc2dask.evaluate("pysc2_evolved.agents.random_agent.RandomAgent", episodes=0)
    with pytest.raises(ConfigError, match="sc2dask.train.envs must be >= 1, not -1"):
        sc2dask.train(envs=-1)
