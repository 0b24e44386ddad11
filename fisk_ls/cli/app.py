"""`fisk-ai`: the terminal front end. Parse → call the core → render (render.py).

Every knowledge command takes ``--json`` and then prints exactly one JSON object on stdout (a
usage error too: ``{"error": ...}``). ``--config``, ``--store-dir`` and ``--json`` are accepted
before or after ``knowledge`` and after the subcommand; the last one given wins. stdout carries
only the answer; the tier line and progress go to stderr. Exit codes: 0 success or a soft state
(not built, nothing to remove), 1 an error, 2 usage, 130 interrupted. Heavy modules (rich, the
server, MCP) are imported only by the commands that use them, so a search starts fast.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from ..knowledge import (
    KnowledgeError,
    absolute_roots,
    bounded,
)
from . import render
from .options import (
    Context,
    emit_json,
    knowledge_command,
    missing_mcp_message,
    shared_options,
    state,
)
from .search import search_cmd, show_cmd

WAIT_SECONDS = 600.0


@click.group()
@click.version_option(package_name="fisk-ls")
@shared_options()
def cli() -> None:
    """fisk-ai: local knowledge search over a project's markdown and text docs.

    The project is found from the current folder upwards: the nearest folder holding
    agent.yaml (no higher than the git repository's top), else the repository's top, else the
    current folder. --config overrides it.
    """


@click.group("knowledge")
@shared_options()
def knowledge() -> None:
    """Build, inspect and search the knowledge index."""


cli.add_command(knowledge)
cli.add_command(knowledge, name="rag")
knowledge.add_command(search_cmd)
knowledge.add_command(show_cmd)


def _json_requested(args: list[str]) -> bool:
    return "--json" in (args[: args.index("--")] if "--" in args else args)


def run(argv: list[str]) -> None:
    """Run ``argv`` through click (entry.py's ``main`` calls it for everything its quick path
    leaves); usage errors become ``{"error": ...}`` under --json."""
    try:
        code = cli.main(argv, prog_name="fisk-ai", standalone_mode=False)
    except click.ClickException as exc:
        vars(exc)["message"] = bounded(exc.message)  # click quotes a bad value whole
        if _json_requested(argv):
            emit_json({"error": bounded(exc.format_message())})
        else:
            exc.show()
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("aborted", err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


@knowledge.command("index")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--reindex", is_flag=True, help="Rebuild from scratch (readers keep the old index).")
@click.option("--dry-run", is_flag=True, help="Report what would be indexed; write nothing.")
@click.option("--wait", is_flag=True, help="Wait for another writer instead of failing.")
@click.option(
    "--from",
    "pack",
    type=click.Path(path_type=Path),
    default=None,
    metavar="PACK",
    help="Adopt a knowledge pack first (`fisk-ai knowledge pack`): files whose content equals "
    "the pack's are taken from it (with its vectors when the vector space is the same), the "
    "rest indexed here.",
)
@knowledge_command
def index_cmd(
    obj: Context,
    paths: tuple[Path, ...],
    reindex: bool,
    dry_run: bool,
    wait: bool,
    pack: Path | None,
) -> None:
    """Index PATHS (default: the configured paths, or the project root)."""
    from .progress import IndexProgress

    settings = obj.settings()
    missing = [str(p) for p in paths if not os.path.lexists(p)]
    if missing:
        raise KnowledgeError(f"no such file or folder: {', '.join(missing)}")
    roots = absolute_roots([str(p) for p in paths]) if paths else None
    if not obj.as_json:
        click.echo(render.tier(settings), err=True)
    if settings.embeddings is not None and not dry_run and not obj.as_json and pack is None:
        _, vectors = obj.read(lambda kb: kb.stats().vectors)
        if not vectors:  # no vector cache to rebuild from: every chunk is embedded
            click.echo(render.first_hybrid_build(settings), err=True)
    with obj.project() as project, IndexProgress(enabled=not obj.as_json) as progress:
        stats = project.index(
            roots,
            rebuild=reindex,
            dry_run=dry_run,
            wait=WAIT_SECONDS if wait else 0.0,
            reporter=progress,
            progress=None if obj.as_json else render.download_progress(),
            pack=pack,
        )
    if obj.as_json:
        emit_json(
            {"tier": render.tier(settings), "store": str(settings.store_dir), **stats.as_dict()}
        )
    else:
        click.echo(render.index_summary(stats))


@knowledge.command("pack")
@click.argument("out", type=click.Path(path_type=Path, dir_okay=False))
@knowledge_command
def pack_cmd(obj: Context, out: Path) -> None:
    """Write the index to OUT, one portable file (OUT.gz / OUT.xz: compressed) that
    `fisk-ai knowledge index --from OUT` (or `prebuilt: OUT` in agent.yaml) adopts."""
    with obj.project() as project:
        stats = project.pack(out)
    if obj.as_json:
        m = stats.manifest
        emit_json(
            {
                "pack": str(stats.path),
                "bytes": stats.bytes,
                "store_bytes": stats.store_bytes,
                "documents": m.documents,
                "chunks": m.chunks,
                "vectors": m.vectors,
                "commit": m.commit,
                "created": m.created,
            }
        )
    else:
        click.echo(render.pack_summary(stats))


@knowledge.command("watch")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--debounce", default="2s", show_default=True, help="Quiet time before a pass.")
@click.option("--no-initial", is_flag=True, help="Skip the initial index pass.")
@knowledge_command
def watch_cmd(obj: Context, paths: tuple[Path, ...], debounce: str, no_initial: bool) -> None:
    """Index, then keep the index fresh as files change (Ctrl-C to stop). With --json, one
    JSON object per line ({"event": ...})."""
    from .watch import run_watch

    roots = absolute_roots([str(p) for p in paths]) if paths else None
    with obj.project() as project:
        run_watch(project, roots, debounce, no_initial, as_json=obj.as_json)


@knowledge.command("sources")
@knowledge_command
def sources_cmd(obj: Context) -> None:
    """List indexed documents."""
    settings, sources = obj.read(lambda kb: kb.sources())
    if obj.as_json:
        emit_json(render.sources_json(settings, sources))
    else:
        click.echo(render.tier(settings), err=True)
        click.echo(render.sources_text(settings, sources))


@knowledge.command("stats")
@knowledge_command
def stats_cmd(obj: Context) -> None:
    """Counts and sizes of the index."""
    settings, (stats, files) = obj.read(lambda kb: (kb.stats(), kb.model_files()))
    if obj.as_json:
        emit_json(render.stats_json(settings, stats, files))
    else:
        click.echo(render.stats_text(settings, stats, files))


@knowledge.command("doctor")
@click.option(
    "--full",
    is_flag=True,
    help="Compare the full-text index with all the chunks' text however long it takes "
    "(else the comparison stops after a few seconds and says so).",
)
@knowledge_command
def doctor_cmd(obj: Context, full: bool) -> None:
    """Check the index, its files, the lock and the embeddings server."""
    with obj.project() as project:
        settings = project.settings
        checks = project.doctor(full=full)
    broken = any(c.broken for c in checks)
    if obj.as_json:
        emit_json(render.doctor_json(settings, checks, broken))
    else:
        click.echo(render.doctor_text(settings, checks))
        if broken:
            click.echo("doctor found problems that must be fixed", err=True)
    if broken:
        sys.exit(1)


@knowledge.command("rm")
@click.argument("paths", nargs=-1, required=True)
@knowledge_command
def rm_cmd(obj: Context, paths: tuple[str, ...]) -> None:
    """Remove documents (files or folders) from the index."""
    with obj.project() as project:
        done = project.remove(paths)
    if done is None:
        _soft(obj, "the knowledge index is not built; nothing to remove", removed=[])
        return
    if obj.as_json:
        emit_json({"removed": done.removed, "requested": list(paths), "missing": done.missing})
        if done.missing:
            sys.exit(1)
        return
    for key in done.removed:
        click.echo(f"removed {key}")
    for typed in done.missing:
        click.echo(bounded(f"not indexed: {typed}"), err=True)
    click.echo(f"removed {len(done.removed)} document(s)")
    if done.missing:
        sys.exit(1)


@knowledge.command("reset")
@click.option("--force", is_flag=True, help="Really delete every document and chunk.")
@knowledge_command
def reset_cmd(obj: Context, force: bool) -> None:
    """Empty the index (asks for --force)."""
    notes: list[str] = []
    with obj.project() as project:
        counts = project.reset(force=force, notes=notes)
    if not obj.as_json:
        for note in notes:
            click.echo(f"note: {note}", err=True)
    if counts is None:
        _soft(obj, "no knowledge index to reset", documents=0, chunks=0, notes=notes)
        return
    docs, chunks = counts
    if obj.as_json:
        emit_json({"reset": True, "documents": docs, "chunks": chunks, "notes": notes})
    else:
        click.echo(f"reset: removed {docs} documents and {chunks} chunks")


def _soft(obj: Context, message: str, **fields: Any) -> None:
    """Nothing to do: the index is not built (``rm``, ``reset``)."""
    if obj.as_json:
        from ..knowledge import Status

        emit_json({"status": Status.INDEX_NOT_BUILT, "message": message, **fields})
    else:
        click.echo(message)


@cli.command("lsp")
@click.option("--tcp", "tcp", default=None, metavar="HOST:PORT", help="Listen on loopback TCP.")
@click.option(
    "--token-env",
    default=None,
    metavar="NAME",
    help="With --tcp: the environment variable holding the token clients must send.",
)
@click.option("--log-file", type=click.Path(path_type=Path), default=None)
def lsp_cmd(tcp: str | None, token_env: str | None, log_file: Path | None) -> None:
    """Run the fisk-ls language server on stdio."""
    from ..lsp.__main__ import serve

    serve(tcp=tcp, log_file=log_file, token_env=token_env)


@cli.command("mcp")
@shared_options(json_flag=False)
@click.option("--http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option(
    "--host",
    default=None,
    help="Bind address for --http (default 127.0.0.1); an explicit host needs --token-env.",
)
@click.option("--port", default=8080, show_default=True, type=int)
@click.option(
    "--token-env",
    default=None,
    help="Name of an env var holding the bearer token clients must send (--http).",
)
@click.option(
    "--project",
    "projects",
    multiple=True,
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    metavar="DIR",
    help="Serve knowledge_search over the project DIR belongs to; repeatable: one tool over "
    "all of them, hits merged by score (each project's agent.yaml must allowlist it).",
)
@click.pass_context
def mcp_cmd(
    ctx: click.Context,
    http: bool,
    host: str | None,
    port: int,
    token_env: str | None,
    projects: tuple[Path, ...],
) -> None:
    """Serve knowledge_search over MCP (only when allowlisted in agent.yaml)."""
    try:
        from ..agent.mcp import serve
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise click.ClickException(missing_mcp_message(exc)) from exc
    obj = state(ctx)
    try:
        serve(
            config=obj.config,
            store_dir=obj.store_dir,
            http=http,
            host=host,
            port=port,
            token_env=token_env,
            projects=projects,
        )
    except KnowledgeError as exc:
        raise click.ClickException(str(exc)) from exc


if __name__ == "__main__":  # pragma: no cover
    run(sys.argv[1:])
