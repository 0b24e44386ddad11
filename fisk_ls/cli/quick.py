"""The quick path of a plain search: ``fisk-ai [knowledge|rag] search QUERY --json ...`` read
and run without importing click (about a tenth of a search's time in a new process).

It takes only what it can take at once: the options of flags.py in ``--name value`` or
``--name=value`` form, one QUERY, ``--json``, and option values that click would accept as
they are. Anything else (``--help``, ``--``, another command, ``--project``, ``--expand``, an
unknown or incomplete option, a path click must look at, a request the core refuses) returns
None before anything is searched, and the command runs through click (app.py) as written,
which accepts it or reports it in its own words. Its answer, exit codes and errors are the
click path's: the same request (``check_request``), the same JSON and the same error
conversion (``context.guarded``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..knowledge import RequestError, SearchRequest
from .context import Context, emit_json, guarded, search_request
from .flags import SEARCH, SHARED, Flag, top_k_value

_SHARED = {f.name: f for f in SHARED}
_SEARCH = {f.name: f for f in SEARCH if f.dest != "expand"} | _SHARED
_COMMANDS = (("knowledge", "rag"), ("search",))
"""The words before the search's own arguments: the group (``rag`` is its other name), then
the command."""

_PATHS = {"store_dir": stat.S_ISDIR, "config": stat.S_ISREG}
"""The shared options' paths and the kind of file click accepts for each when it exists (a
folder for --store-dir, anything but a folder for --config: a file is what is taken here)."""


def parse(args: Sequence[str]) -> tuple[Context, dict[str, Any]] | None:
    """The shared options and the search's values of ``args``, when the quick path takes
    them all (see the module's docstring); else None."""
    obj = Context()
    values: dict[str, Any] = {"top_k": None, "also": [], "full": False}
    values |= {"paths": [], "excludes": [], "tags": []}
    query: list[str] = []
    level = 0  # 0: before `knowledge`, 1: before `search`, 2: the search's own arguments
    i = 0
    while i < len(args):
        token = args[i]
        if not token.startswith("--"):
            if token.startswith("-") or (level < 2 and token not in _COMMANDS[level]):
                return None
            if level == 2:
                query.append(token)
            level = min(level + 1, 2)
            i += 1
            continue
        name, eq, given = token.partition("=")
        flag = (_SEARCH if level == 2 else _SHARED).get(name)
        if flag is None or (flag.kind == "flag" and eq):
            return None
        if flag.kind == "flag":
            value: Any = True
        elif eq:
            value = given
        elif i + 1 < len(args) and not args[i + 1].startswith("-"):
            i += 1
            value = args[i]
        else:
            return None
        if not _take(obj, values, flag, value):
            return None
        i += 1
    if level < 2 or len(query) != 1 or not obj.as_json:
        return None
    values["query"] = query[0]
    return obj, {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}


def _take(obj: Context, values: dict[str, Any], flag: Flag, value: Any) -> bool:
    """Record one option's value; False when it is click's to judge."""
    if flag.dest == "as_json":
        obj.as_json = True
    elif flag.dest in _PATHS:
        if not value or not _plain_path(value, _PATHS[flag.dest]):
            return False
        setattr(obj, flag.dest, Path(value))
    elif flag.dest == "top_k":
        try:
            values["top_k"] = top_k_value(value)
        except ValueError:
            return False
    elif flag.kind == "many":
        values[flag.dest].append(value)
    else:
        values[flag.dest] = value
    return True


def _plain_path(path: str, kind: Any) -> bool:
    """Whether click takes ``path`` as it is: it does not exist, or it is of the ``kind`` the
    option wants and readable."""
    try:
        st = os.stat(path)
    except OSError:
        return True
    return bool(kind(st.st_mode)) and os.access(path, os.R_OK)


def search(args: Sequence[str]) -> bool:
    """Run ``args`` as a plain search when the quick path takes them (False: it did nothing,
    click is to run them)."""
    parsed = parse(args)
    if parsed is None:
        return False
    obj, values = parsed
    del values["full"]  # --json prints whole chunks always
    try:
        request: SearchRequest = search_request(obj, values, here=True)
    except RequestError:
        return False  # click names the field in its own words
    guarded(obj, lambda: _run(obj, request))
    return True


def _run(obj: Context, request: SearchRequest) -> None:
    from . import render

    with obj.project() as project:
        result = project.search(request)
    emit_json(render.search_json(result))
