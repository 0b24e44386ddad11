"""A document's front matter: YAML (``---``) or TOML (``+++``) at its top, read once for the
fields fisk-ls uses (``title``, a one-line ``description``, ``tags``); a plain one-line title
with no tags is read without the parser. Pure: no I/O."""

from __future__ import annotations

import datetime
import re
import sys
from dataclasses import dataclass
from typing import Any

from ..sanitize import one_line
from ..settings_checks import normal_tag
from ..settings_schema import TAGS
from .blocks import MAX_LABEL_CHARS

_FRONT_FIELD = re.compile(
    r"""^(?P<k>title|description)\s*[:=]\s*(?P<q>["']?)(?P<t>.*?)(?P=q)\s*$"""
)


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """What a document's front matter says (the fields fisk-ls reads)."""

    lines: int = 0
    """How many lines it takes (0: there is none)."""
    title: str = ""
    description: str = ""
    tags: tuple[str, ...] = ()
    problem: str = ""
    """Why part of it was dropped (it does not parse, is too long, or ``tags`` is not a list or
    a string); "" when nothing was."""


MAX_FRONT_CHARS = 65536
"""Front matter longer than this is not parsed as YAML/TOML (only its one-line fields are read)."""

MAX_DOCUMENT_TAGS = 64
"""A document's first this many distinct tags are kept."""


def front_matter(lines: list[str]) -> FrontMatter:
    """The YAML (``---``) or TOML (``+++``) front matter at the top of ``lines``.

    Parsed with PyYAML's safe loader (or tomllib) for ``title`` (a folded one too) and
    ``tags``: a list, or a string of tags separated by commas or spaces (Jekyll's form). When
    it does not parse (a template, a tab), only its one-line ``title:`` is read. The
    ``description`` is the one-line ``description:`` alone: the folded ones (265 OTel pages)
    ranked the English dev set lower (bench/tuning.md, "Frontmatter tags"). ``aliases`` are
    not read: Hugo's are a page's old URLs, and as title words they ranked lower too."""
    if not lines or lines[0].rstrip() not in ("---", "+++"):
        return FrontMatter()
    yaml_form = lines[0].rstrip() == "---"
    closers = ("---", "...") if yaml_form else ("+++",)
    end = next((i for i in range(1, min(len(lines), 2000)) if lines[i].rstrip() in closers), None)
    if end is None:
        return FrontMatter()
    inner = lines[1:end]
    fields = _line_fields(inner)
    if yaml_form and (plain := _plain_title(inner)) is not None:
        return FrontMatter(end + 1, plain, fields.get("description", ""))
    data = _parse(inner, yaml_form)
    if isinstance(data, str):
        kind = "YAML" if yaml_form else "TOML"
        dropped = (
            f"its {kind} front matter {data}, so its tags were not read (only one-line "
            "`title:` and `description:` lines were)"
        )
        return FrontMatter(
            end + 1, fields.get("title", ""), fields.get("description", ""), problem=dropped
        )
    title = _one_line(data.get("title"))
    tags, problem = _tags(data.get("tags"))
    return FrontMatter(end + 1, title, fields.get("description", ""), tags, problem)


_PLAIN_VALUE = re.compile(r"[A-Za-z][^\t#:'\"\[\]{}|>&*!%@`\\]*")
"""A value YAML reads as the same text: a plain scalar that starts with a letter (not a
number, date, anchor, alias, tag or quote) and holds no colon, comment, flow or block
indicator."""

_YAML_WORDS = frozenset(("yes", "no", "true", "false", "on", "off", "null"))
"""Plain words YAML 1.1 reads as a boolean or null, not as text."""


def _plain_title(inner: list[str]) -> str | None:
    """The title, without parsing YAML, when the front matter names no ``tags`` and its one
    ``title:`` line is a plain one-line value (what the parser would read, whitespace runs
    folded as ``_one_line`` does); None when only the parser can say. Most pages' front matter
    is such (the PowerShell docs: 14k of 14k), and PyYAML's constructor was a sixth of
    chunking a page."""
    if any("tags" in line for line in inner):
        return None
    found = [i for i, line in enumerate(inner) if line.startswith("title")]
    if len(found) != 1:
        return None
    i = found[0]
    m = _FRONT_FIELD.match(inner[i].rstrip())
    if m is None or m.group("q") or not inner[i][5:].lstrip().startswith(":"):
        return None
    value = m.group("t")
    if not _PLAIN_VALUE.fullmatch(value) or value.lower() in _YAML_WORDS:
        return None
    if i + 1 < len(inner) and inner[i + 1][:1] in (" ", "\t"):  # a value continued below
        return None
    return " ".join(value.split())[:MAX_LABEL_CHARS]


def _parse(inner: list[str], yaml_form: bool) -> dict[str, Any] | str:
    """The front matter as a mapping, else why it is not read ("does not parse (...)", "is
    over 65,536 characters"). An empty one, or a scalar, is an empty mapping: nothing dropped."""
    text = "\n".join(inner)
    if len(text) > MAX_FRONT_CHARS:
        return f"is over {MAX_FRONT_CHARS:,} characters, so it was not parsed"
    import yaml  # here: most front matter needs no parser (_plain_title), a no-change run none

    data: object
    try:
        if yaml_form:
            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            data = yaml.load(text, Loader=loader)  # a safe loader (C when libyaml is there)
        elif sys.version_info >= (3, 11):
            import tomllib

            data = tomllib.loads(text)
        else:  # pragma: no cover - Python 3.10 has no TOML parser
            return {}
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        reason = one_line(str(exc), 120) or type(exc).__name__
        return f"does not parse ({reason})"
    if isinstance(data, list):
        return "is a list, not a mapping of fields"
    return data if isinstance(data, dict) else {}


def _one_line(value: object) -> str:
    """A scalar field as one line of at most ``MAX_LABEL_CHARS`` ("" for a list, a map)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float | datetime.date):
        return ""
    return " ".join(str(value).split())[:MAX_LABEL_CHARS]


def _listed(value: object) -> list[object]:
    if isinstance(value, list):
        return value
    return [value] if isinstance(value, str) else []


def _tags(value: object) -> tuple[tuple[str, ...], str]:
    """Normalised distinct tags (a list's items whole, a string split on commas and spaces),
    and what was dropped ("" when nothing): a ``tags`` that is not a list or a string, items
    that are lists or mappings, tags longer than a request may name."""
    if value is None:
        return (), ""
    if not isinstance(value, list | str):
        what = "a mapping" if isinstance(value, dict) else "not a list or text"
        return (), f"its front-matter tags are {what}, so they were not read"
    items = _listed(value)
    if isinstance(value, str):
        items = [t for t in re.split(r"[,\s]+", value) if t]
    longest = TAGS.item_max_length or MAX_LABEL_CHARS
    odd = sum(isinstance(t, bool | list | dict) for t in items)
    found = [normal_tag(_one_line(t)) for t in items if not isinstance(t, bool | list | dict)]
    long = sum(len(t) > longest for t in found)
    kept = tuple(dict.fromkeys(t for t in found if t and len(t) <= longest))[:MAX_DOCUMENT_TAGS]
    dropped = [
        *([f"{odd} that are not text"] if odd else []),
        *([f"{long} over {longest} characters"] if long else []),
    ]
    problem = (
        f"some of its front-matter tags were not read ({', '.join(dropped)})" if dropped else ""
    )
    return kept, problem


def _line_fields(inner: list[str]) -> dict[str, str]:
    """The one-line ``title:`` and ``description:`` lines of front matter (as written, quotes
    stripped; a folded value, ``>`` or ``|``, is not read)."""
    fields: dict[str, str] = {}
    for line in inner:
        m = _FRONT_FIELD.match(line.rstrip())
        if m and m.group("k") not in fields:
            value = m.group("t").strip()
            if value and value not in (">", "|", ">-", "|-"):
                fields[m.group("k")] = value[:MAX_LABEL_CHARS]
    return fields
