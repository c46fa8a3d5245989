"""sc2dask's settings: defaults in ``sc2dask.yaml``, registered with ``dask.config``.

Users override them the usual dask ways (YAML in ``~/.config/dask``, ``DASK_SC2DASK__...``
environment variables, ``dask.config.set``) or with keyword arguments; a key that does
not exist is an error naming the keys that do.
"""

from __future__ import annotations

import difflib
import os

import dask.config
import yaml

from .errors import ConfigError

_DEFAULTS_FILE = os.path.join(os.path.dirname(__file__), "sc2dask.yaml")
with open(_DEFAULTS_FILE) as f:
    DEFAULTS = yaml.safe_load(f)
dask.config.update_defaults(DEFAULTS)


def settings(section: str, **overrides) -> dict:
    """The ``sc2dask.<section>`` settings with ``overrides`` (snake_case or kebab-case keys)."""
    known = DEFAULTS["sc2dask"][section]
    current = dask.config.get(f"sc2dask.{section}")
    for key in current:
        _check_key(section, key, known)
    merged = {key.replace("_", "-"): value for key, value in current.items()}
    for key, value in overrides.items():
        key = key.replace("_", "-")
        _check_key(section, key, known)
        if value is not None:
            merged[key] = value
    return merged


def _check_key(section: str, key: str, known: dict) -> None:
    key = key.replace("_", "-")
    if key not in known:
        close = difflib.get_close_matches(key, list(known), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"Unknown sc2dask.{section} setting {key!r}.{hint} Known: "
                          f"{', '.join(known)}.")
