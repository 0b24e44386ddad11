"""A paragraph repeated in three documents whose chunks differ around it (an option's paragraph
on every command page taking that option): the fixture every front end's fold test uses."""

from __future__ import annotations

import textwrap
from pathlib import Path

OPTION = (
    "If set to true, the registry client keeps a copy of every tarball it fetches in the "
    "shared cache folder, so a second install of the same version reads it from disk."
)
COMMANDS = {
    "install": "Installs a package and any packages it depends on into the project.",
    "ci": "Installs a project from its lockfile alone, failing when they disagree.",
    "update": "Updates the packages to the newest versions their ranges allow.",
}
QUERY = "keeps a copy of every tarball it fetches"
"""Matches the option's paragraph on the three command pages, and cache.md."""
PAGES = tuple(f"commands/{c}.md" for c in COMMANDS)


def page(command: str, intro: str, option: str = OPTION, heading: str = "cache-tarballs") -> str:
    """A command page: its own title and introduction, then the option's paragraph."""
    return textwrap.dedent(f"""\
        # {command}

        {intro}

        ## Configuration

        ### {heading}

        {option}
        """)


def write_repeated(root: Path) -> Path:
    """The three command pages and a page of its own about the cache, under ``root``."""
    docs = {f"commands/{c}.md": page(c, intro) for c, intro in COMMANDS.items()}
    docs["cache.md"] = "# Cache\n\nThe cache folder holds tarballs fetched from the registry.\n"
    for rel, text in docs.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def option_lines(root: Path, path: str) -> tuple[int, int]:
    """The 1-based lines of the option's heading and paragraph in one command page."""
    lines = (root / path).read_text(encoding="utf-8").split("\n")
    first = lines.index("### cache-tarballs") + 1
    return first, lines.index(OPTION) + 1
