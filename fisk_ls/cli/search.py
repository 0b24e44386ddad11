"""`fisk-ai knowledge search` and `show`: a request to the core, its answer rendered
(render.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from ..knowledge import SHOW_CONTEXT
from . import render
from .flags import SEARCH
from .options import (
    Context,
    F,
    TopK,
    check_expansion,
    emit_json,
    knowledge_command,
    option,
    project_option,
    search_request,
)


def search_options(fn: F) -> F:
    """The search command's options (flags.py ``SEARCH``), in the table's order."""
    for flag in reversed(SEARCH):
        fn = option(flag, {"top_k": TopK()})(fn)
    return fn


@click.command("search")
@click.argument("query")
@search_options
@project_option
@knowledge_command
def search_cmd(
    obj: Context,
    query: str,
    top_k: int | None,
    also: tuple[str, ...],
    expand: bool,
    full: bool,
    paths: tuple[str, ...],
    excludes: tuple[str, ...],
    tags: tuple[str, ...],
    projects: tuple[Path, ...],
) -> None:
    """Search the index for QUERY (within --path, minus --exclude, with a --tag, when given).

    With --project DIR (repeatable) the projects DIR belong to are searched as one: their hits
    merged by score, each citation naming its project (NAME:relpath#ordinal, which `show
    --project ...` opens); --path is then relative to each project's root."""
    if projects and excludes:
        raise click.UsageError("--exclude does not combine with --project (use --path)")
    values = {"query": query, "top_k": top_k, "also": also, "paths": paths}
    values |= {"excludes": excludes, "tags": tags, "expand": expand}
    request = search_request(obj, values, here=not projects)
    if projects:
        with obj.projects(projects) as group:
            if expand:
                check_expansion(group.projects[0].settings)
            result = group.search(request)
    else:
        with obj.project() as project:
            if expand:
                check_expansion(project.settings)
            result = project.search(request)
    if obj.as_json:
        emit_json(render.search_json(result))
    else:
        bold = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        click.echo(render.tier_text(result.tier), err=True)
        if result.expansion is not None:
            click.echo(render.expansion_text(result.expansion), err=True)
        if note := render.search_note(result):
            click.echo(f"note: {note}", err=True)
        click.echo(render.search_text(result, full=full, bold=bold))


@click.command("show")
@click.argument("citation")
@click.option(
    "--context",
    "context",
    type=click.IntRange(int(SHOW_CONTEXT.minimum or 0), int(SHOW_CONTEXT.maximum or 0)),
    default=0,
    metavar="N",
    help="Also print N chunks of the same document before and after it (0-5).",
)
@project_option
@knowledge_command
def show_cmd(obj: Context, citation: str, context: int, projects: tuple[Path, ...]) -> None:
    """Print the chunk a CITATION (relpath#ordinal; NAME:relpath#ordinal with --project)
    points at."""
    if projects:
        with obj.projects(projects) as group:
            found = group.around(citation, context) if context else group.show(citation)
        chunks = found[1] if isinstance(found[1], list) else [found[1]]
    elif context:
        _, chunks = obj.read(lambda kb: kb.around(citation, context))
    else:
        chunks = [obj.read(lambda kb: kb.show(citation))[1]]
    if context:
        if obj.as_json:
            emit_json(render.around_json(chunks, citation))
        else:
            for note in dict.fromkeys(render.stale_note(c) for c in chunks if c.stale):
                click.echo(note, err=True)
            click.echo(render.around_text(chunks, citation))
        return
    chunk = chunks[0]
    if obj.as_json:
        emit_json(render.show_json(chunk))
    else:
        if chunk.stale:
            click.echo(render.stale_note(chunk), err=True)
        click.echo(render.show_text(chunk))
