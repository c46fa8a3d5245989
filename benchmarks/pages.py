"""What benchmarks write for the docs pages: tables between two marker comments, and the
finish of a chart with one row per name."""

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


def finish_rows(fig, ax, names: list[str], xlabel: str, out: Path) -> None:
    """Label a chart's rows with ``names``, read top to bottom, and save it to ``out`` at
    the pages' resolution."""
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.legend(loc="lower right")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
