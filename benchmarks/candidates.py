"""Candidate settings of the long benchmarks: ``--agent entropy-coef=0.01`` and ``--train
step-mul=16`` replace one default for a run, which its row then names, so a candidate is
never mistaken for the defaults."""

from __future__ import annotations

import argparse

import yaml

EXAMPLES = {"agent": "action-set=attack", "train": "step-mul=16"}


def add_flags(parser: argparse.ArgumentParser, *sections: str) -> None:
    """``--agent`` and/or ``--train``, each repeatable, SETTING=VALUE."""
    for section in sections:
        parser.add_argument(
            f"--{section}",
            action="append",
            default=[],
            metavar="SETTING=VALUE",
            help=f"a candidate {section} setting instead of the default ({EXAMPLES[section]}); "
            "give it its own --out and --page",
        )


def overrides(parser: argparse.ArgumentParser, args, section: str) -> dict[str, object]:
    """``--agent action-set=attack`` as ``{"action_set": "attack"}``; values are YAML
    (lists, numbers)."""
    return dict(_setting(parser, text, section) for text in getattr(args, section))


def _setting(parser: argparse.ArgumentParser, text: str, section: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep:
        parser.error(f"--{section} {text!r}: write SETTING=VALUE, e.g. {EXAMPLES[section]}")
    return name.strip().replace("-", "_"), yaml.safe_load(value)
