"""Checking a value against the settings contract (``settings_schema.py``).

One behaviour per boundary for a value out of range:

- a *request* (CLI flag, LSP command argument, tool/MCP argument): :class:`SettingError`, a
  clear error naming the limit (:func:`check_top_k`, :func:`check_query`);
- *agent.yaml*: a :class:`ConfigError` naming the file, the key and the limit;
- the language server's *initializationOptions / configuration*: the field keeps its default
  and one message names every bad field (:func:`check_value` returns the problem, the caller
  collects them). The editors send their settings as they are and show that message.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from typing import Any

from .errors import ConfigError
from .settings_schema import ALSO, QUERY, SCOPE, SHOW_CONTEXT, TAGS, TOP_K, Setting


class SettingError(ConfigError):
    """A request argument is out of the contract's range (the message names the limit)."""


def check_value(setting: Setting, value: object) -> str | None:
    """None when ``value`` fits ``setting``, else what is wrong ("expected …, got …")."""
    ok: bool
    if setting.kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif setting.kind == "number":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif setting.kind == "boolean":
        ok = isinstance(value, bool)
    elif setting.kind == "string":
        ok = isinstance(value, str)
    else:
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    if ok and isinstance(value, int | float):
        if setting.minimum is not None and value < setting.minimum:
            ok = False
        if setting.maximum is not None and value > setting.maximum:
            ok = False
    if ok and isinstance(value, str) and setting.max_length is not None:
        ok = len(value) <= setting.max_length
    if ok and setting.choices is not None:
        ok = value in setting.choices
    if ok:
        return None
    return f"expected {setting.limits()}, got {shown(value)}"


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 2, 60, 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 4


def shown(value: object) -> str:
    """``value`` as an error message may quote it: a long string as its length, anything else a
    short repr (at most 2 levels, 4 items, 60 characters a string), so no message echoes a huge
    or deeply nested input back whole."""
    if isinstance(value, str) and len(value) > 80:
        return f"{len(value):,} characters"
    try:
        return _REPR.repr(value)[:100]
    except RecursionError:  # pragma: no cover - reprlib stops at maxlevel
        return type(value).__name__


Names = Mapping[str, str]
"""A rule's field names (wire names) in the caller's spelling ({"baseUrl": "base_url"}); a name
not in it is used as it is."""


def rule_condition(rule: dict[str, Any], names: Names | None = None) -> str:
    """The ``if`` of a rule in words: "provider builtin"."""
    spell = names or {}
    return " and ".join(
        f"{spell.get(k, k)} {p['const']}" for k, p in rule["if"]["properties"].items()
    )


def rule_needs(rule: dict[str, Any], names: Names | None = None) -> str:
    """What the ``else`` branch requires, or the condition: "baseUrl and model, or provider
    builtin"."""
    spell = names or {}
    needed = " and ".join(spell.get(k, k) for k in rule["else"]["required"])
    return f"{needed}, or {rule_condition(rule, names)}"


def rule_problems(
    rule: dict[str, Any], value: Mapping[str, Any], names: Names | None = None
) -> list[tuple[str | None, str]]:
    """What ``value`` (an object's given fields, wire names) breaks of ``rule``, as (field or
    None for the whole object, problem) pairs; fields and messages spelled by ``names``.

    The subset of JSON Schema the rule uses: ``if`` holds ``const`` properties that must all be
    given; ``then`` holds ``const ""`` properties (not used under the condition); ``else``
    holds ``required`` properties with ``minLength`` 1.
    """
    spell = names or {}
    condition = rule["if"]
    if all(k in value for k in condition.get("required", ())) and all(
        value.get(k) == p["const"] for k, p in condition["properties"].items() if k in value
    ):
        unused = rule["then"].get("properties", {})
        return [
            (spell.get(k, k), f"not used with {rule_condition(rule, names)}")
            for k, p in unused.items()
            if value.get(k) not in (None, p["const"])
        ]
    if any(value.get(k) in (None, "") for k in rule["else"].get("required", ())):
        needed = " and ".join(spell.get(k, k) for k in rule["else"]["required"])
        return [(None, f"{needed} are required, or {rule_condition(rule, names)}")]
    return []


def check_top_k(value: object, flag: str = "top_k") -> int | None:
    """A requested hit count: None (use the configured one) or 1–20; SettingError otherwise."""
    if value is None:
        return None
    if problem := check_value(TOP_K, value):
        raise SettingError(f"{flag}: {problem}")
    assert isinstance(value, int)
    return value


def check_query(value: object, name: str = "query") -> str:
    """A query string of at most 2,000 characters; SettingError otherwise.

    A blank query is allowed here (the search answers ``no_terms``); the model-facing tool
    additionally refuses it, so a model learns to send words.
    """
    if not isinstance(value, str):
        raise SettingError(f"{name}: expected a string")
    if problem := check_value(QUERY, value):
        raise SettingError(f"{name}: {problem}; shorten it")
    return value


def check_strings(
    setting: Setting, value: object, name: str, noun: str = "string", *, nul: bool = False
) -> tuple[str, ...]:
    """A request's list of strings (``setting``'s ``max_items`` and ``item_max_length``): None
    or a list; SettingError otherwise, naming the limit (``noun``: what one item is; ``nul``:
    a NUL byte is refused too, as agent.yaml refuses it in a path or name)."""
    if value is None:
        return ()
    most, longest = setting.max_items, setting.item_max_length
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise SettingError(f"{name}: expected a list of at most {most} strings, got {shown(value)}")
    if most is not None and len(value) > most:
        raise SettingError(f"{name}: at most {most} {noun}s, got {len(value)}")
    for i, text in enumerate(value):
        if longest is not None and len(text) > longest:
            raise SettingError(
                f"{name}[{i}]: expected a {noun} of at most {longest:,} characters, got "
                f"{len(text):,} characters; shorten it"
            )
        if nul and "\0" in text:
            raise SettingError(f"{name}[{i}]: contains a NUL byte (\\0), which no {noun} may hold")
    return tuple(value)


def check_also(value: object, name: str = "also") -> tuple[str, ...]:
    """Extra search strings: at most 4 of at most 2,000 characters each (blank ones are
    dropped: they find nothing)."""
    return tuple(v for v in check_strings(ALSO, value, name) if v.strip())


def check_scope(value: object, name: str = "paths") -> tuple[str, ...]:
    """A search's scope patterns: at most 16 of at most 1,000 characters each (an empty list
    is no scope)."""
    return check_strings(SCOPE, value, name, "path", nul=True)


def normal_tag(text: str) -> str:
    """A tag as the index stores it and a filter compares it: no leading ``#``, inner whitespace
    collapsed, case-folded ("#Getting Started" and "getting started" are one tag)."""
    return " ".join(text.strip().lstrip("#").split()).casefold()


def check_tags(value: object, name: str = "tags") -> tuple[str, ...]:
    """A search's tag filter: at most 16 tags of at most 100 characters each, returned as the
    index stores them (no leading ``#``, case-folded, blank ones and repeats dropped; an empty
    list is no filter)."""
    tags = [normal_tag(t) for t in check_strings(TAGS, value, name, "tag", nul=True)]
    return tuple(dict.fromkeys(t for t in tags if t))


def check_context(value: object, setting: Setting = SHOW_CONTEXT, name: str = "context") -> int:
    """A neighbour count (``setting``: the CLI's 0-5 or the tool's 0-2); None is 0."""
    if value is None:
        return 0
    if problem := check_value(setting, value):
        raise SettingError(f"{name}: {problem}")
    assert isinstance(value, int)
    return value


def resolve_top_k(value: int | None, default: int = TOP_K.default) -> int:
    """The hit count to use: ``value`` when given (checked), else ``default``."""
    checked = check_top_k(value)
    return default if checked is None else checked
