"""Candidate settings of the long benchmarks: ``--agent entropy-coef=0.01`` and ``--train
step-mul=16`` replace one default for a run, which its row then names, so a candidate is
never mistaken for the defaults."""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

SECTIONS = ("agent", "train")
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


def refuse_default_folders(
    parser: argparse.ArgumentParser, args: argparse.Namespace, results: Path, page: Path
) -> None:
    """A candidate in the defaults' folder would resume their checkpoints, and beside their
    page it would overwrite their row and images: it must name its own."""
    given = [f"--{s} {t}" for s in SECTIONS for t in getattr(args, s, [])]
    shared = Path(args.out).resolve() == results or Path(args.page).resolve().parent == page.parent
    if given and shared:
        parser.error(
            f"{', '.join(given)}: a candidate needs its own --out, and a --page outside "
            f"{page.parent}, or it would resume and overwrite the defaults' run"
        )


def overrides(
    parser: argparse.ArgumentParser, args: argparse.Namespace, section: str
) -> dict[str, object]:
    """``--agent action-set=attack`` as ``{"action_set": "attack"}``; values are YAML
    (lists, numbers)."""
    return dict(_setting(parser, text, section) for text in getattr(args, section))


def _setting(parser: argparse.ArgumentParser, text: str, section: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep:
        parser.error(f"--{section} {text!r}: write SETTING=VALUE, e.g. {EXAMPLES[section]}")
    parsed = yaml.safe_load(value)
    if parsed is None:  # a setting given None is taken from config: the row would lie
        parser.error(f"--{section} {text!r}: give a value (an empty list is [])")
    return name.strip().replace("-", "_"), parsed
