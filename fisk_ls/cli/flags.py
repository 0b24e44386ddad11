"""The options of `fisk-ai` that a search reads, defined once without click.

click builds the shared options (options.py ``shared_options``) and the search command's
(search.py) from these tables, with their help; the quick path of a plain search (quick.py)
reads the command line with the same tables without importing click. A value's type that only
click knows (a path that must be a folder) stays with click: the quick path leaves a value it
cannot take at once to click, which then accepts it or reports it in its own words.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from ..knowledge import ALSO, TAGS, TOP_K, Spelling

Kind = Literal["flag", "value", "many"]
"""An option's arity: a flag, one value (the last one given wins) or a repeatable value."""


class Flag(NamedTuple):
    """One option: its name on the command line, the parameter it fills, its arity, its help
    (and the metavar the help shows for its value)."""

    name: str
    dest: str
    kind: Kind
    help: str
    metavar: str | None = None


SHARED = (
    Flag("--json", "as_json", "flag", "Print one JSON object on stdout."),
    Flag(
        "--config",
        "config",
        "value",
        "agent.yaml to read (default: found from the current folder up).",
    ),
    Flag(
        "--store-dir",
        "store_dir",
        "value",
        "Absolute base folder for the index (env FISK_AI_STORE_DIR).",
    ),
)
"""--json, --config and --store-dir: accepted on `fisk-ai`, on `knowledge` and on each
subcommand (the last one given wins), in this order in the help."""

SEARCH = (
    Flag(
        "--top-k",
        "top_k",
        "value",
        f"Hits, {TOP_K.limits().removeprefix('an integer ')} (default: configured).",
    ),
    Flag(
        "--also",
        "also",
        "many",
        f"Another search string, fused with QUERY (repeatable, at most {ALSO.max_items}): "
        "keywords in the docs' words, a short hypothetical answer, a rephrasing.",
        "TEXT",
    ),
    Flag(
        "--expand",
        "expand",
        "flag",
        "Ask the language model configured under harness.knowledge.expansion in agent.yaml "
        "for extra search strings when the plain results are weak (the question is sent to it).",
    ),
    Flag("--full", "full", "flag", "Print whole chunks, not snippets."),
    Flag(
        "--path",
        "paths",
        "many",
        "Only documents in this folder, file or glob (.gitignore-style, ** allowed), relative "
        "to the current folder; repeatable (a union).",
        "PATH",
    ),
    Flag(
        "--exclude",
        "excludes",
        "many",
        "Leave out documents matching PATH (same syntax); repeatable.",
        "PATH",
    ),
    Flag(
        "--tag",
        "tags",
        "many",
        "Only documents whose front matter has this tag (case and a leading # ignored); "
        f"repeatable (a union, at most {TAGS.max_items}), together with --path.",
        "TAG",
    ),
)
"""The search command's own options (QUERY and ``--project`` aside), in the help's order."""

SPELLING = Spelling(
    query="QUERY",
    top_k="--top-k",
    also="--also",
    paths="--path",
    excludes="--exclude",
    tags="--tag",
    expand="--expand",
)
"""The search command's names of a request's fields."""


def top_k_value(text: str) -> int:
    """--top-k's integer (ValueError when it is none); its range is the request's to check."""
    return int(text.strip())
