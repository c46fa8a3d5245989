"""Tables that benchmarks write onto the docs pages, between two marker comments."""

from __future__ import annotations

from pathlib import Path


def row(cells: list[str]) -> str:
    """One Markdown table row."""
    return "| " + " | ".join(cells) + " |"


def put_between(page: Path, start: str, end: str, lines: list[str]) -> None:
    """Replace what ``page`` has between the markers ``start`` and ``end`` with ``lines``."""
    text = page.read_text()
    a, b = text.index(start) + len(start), text.index(end)
    page.write_text(text[:a] + "\n" + "\n".join(lines) + "\n" + text[b:])
