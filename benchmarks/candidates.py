"""Candidate settings of the long benchmarks: ``--agent entropy-coef=0.01`` and ``--train
step-mul=16`` replace one default for a run, which its row then names, so a candidate is
never mistaken for the defaults."""

from __future__ import annotations

import argparse
from pathlib import Path

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


def refuse_default_folders(parser: argparse.ArgumentParser, args, results, page) -> None:
    """A candidate in the defaults' folder would resume their checkpoints and overwrite
    their row and page: it must name its own."""
    given = [f"--{s} {t}" for s in EXAMPLES for t in getattr(args, s, [])]
    if given and (Path(args.out).resolve() == results or Path(args.page).resolve() == page):
        parser.error(
            f"{', '.join(given)}: a candidate needs its own --out and --page, or it would "
            "resume and overwrite the defaults' run"
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
