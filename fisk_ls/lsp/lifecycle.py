"""initialize / initialized / shutdown / exit, settings and workspace folder changes.

Options from ``initializationOptions`` are read at ``initialize`` (which also decides the
option-dependent capabilities); each folder's ``workspace/configuration`` is laid over them at
``initialized``, when the projects are opened and their first index run starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from pathlib import Path
from typing import Any

from lsprotocol import types

from ..knowledge import KnowledgeError, QueueHooks
from . import symbols, sync
from .convert import file_uri, uri_path
from .options import (
    SECTION,
    Options,
    bad_options_message,
    parse_options,
)
from .progress import EmbedProgress, LspProgress
from .project import WorkspaceProject, open_project
from .server import FiskLanguageServer

log = logging.getLogger(__name__)
CONFIG_TIMEOUT = 5.0


def register(ls: FiskLanguageServer) -> None:
    ls.feature(types.INITIALIZE)(initialize)
    ls.feature(types.INITIALIZED)(initialized)
    ls.feature(types.SHUTDOWN)(shutdown)
    ls.feature(types.EXIT)(exit_)
    ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(configuration_changed)
    ls.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(folders_changed)


def initialize(ls: FiskLanguageServer, params: types.InitializeParams) -> None:
    ls.loop = asyncio.get_running_loop()
    parsed = parse_options(params.initialization_options)
    ls.options = parsed.options
    ls.option_errors = parsed.errors
    # The editor's display language (the core falls back to the server's locale: Neovim 0.11
    # sends none).
    ls.projects.reader_language = params.locale
    if ls.options.workspace_symbols:
        symbols.enable(ls)


async def initialized(ls: FiskLanguageServer, params: types.InitializedParams) -> None:
    folders = workspace_folders(ls)
    try:
        async with folder_lock(ls):
            options = await folder_options(ls, [uri for uri, _ in folders])
            for (_, folder), opts in zip(folders, options, strict=True):
                await add_project(ls, folder, opts, multi=len(folders) > 1)
    finally:
        ls.ready.set()  # requests waiting for the projects go ahead with what opened
    await sync.register_watched_files(ls)


async def shutdown(ls: FiskLanguageServer, params: None) -> None:
    """Stop the runs and close the stores; the runs' progress ``end`` is sent before the reply
    (it was dropped: nothing was sent once shutdown began, so the client showed the run
    forever)."""
    ls.search_lanes.close()
    await asyncio.to_thread(ls.projects.close)
    for progress in list(ls.open_progress):  # a run that did not stop in time
        progress.end("stopped: the server is shutting down")
    ls.closing = True


def exit_(ls: FiskLanguageServer, params: None) -> None:
    ls.exit_code = 0 if ls.closing else 1
    ls.closing = True
    ls.search_lanes.close()
    ls.projects.close()  # a no-op after shutdown; an exit without shutdown still cleans up


async def configuration_changed(
    ls: FiskLanguageServer, params: types.DidChangeConfigurationParams
) -> None:
    """Re-read settings; reopen (and reindex) only the folders whose options changed."""
    async with folder_lock(ls):
        projects = list(ls.projects)
        options = await folder_options(ls, [file_uri(p.folder) for p in projects])
        for project, opts in zip(projects, options, strict=True):
            if opts != project.options:
                folders = ls.projects.folders(project)
                for folder in folders:
                    for gone in ls.projects.remove(folder):
                        await asyncio.to_thread(gone.close)
                for folder in folders:
                    await add_project(ls, folder, opts, multi=len(projects) > 1)


_FOLDER_LOCKS: weakref.WeakKeyDictionary[FiskLanguageServer, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


def folder_lock(ls: FiskLanguageServer) -> asyncio.Lock:
    """One at a time, in arrival order (asyncio.Lock is FIFO): folder and configuration changes
    await between removing and adding, and interleaved they left duplicate projects."""
    lock = _FOLDER_LOCKS.get(ls)
    if lock is None:
        lock = _FOLDER_LOCKS[ls] = asyncio.Lock()
    return lock


async def folders_changed(
    ls: FiskLanguageServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    # Counted before the first await: a status request that follows the notification sees the
    # coming folders as indexing until their projects (with their runs scheduled) are listed.
    adding = 1 if params.event.added else 0
    ls.opening += adding
    try:
        await _change_folders(ls, params)
    finally:
        ls.opening -= adding


async def _change_folders(
    ls: FiskLanguageServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    async with folder_lock(ls):
        for folder in params.event.removed:
            if (path := folder_path(folder.uri)) is not None:
                for project in ls.projects.remove(path):
                    await asyncio.to_thread(project.close)
        open_now = set(ls.projects.folders())
        added = [
            (f.uri, p)
            for f in params.event.added
            if (p := folder_path(f.uri)) is not None and p not in open_now
        ]
        added = list({p: (u, p) for u, p in added}.values())  # the same folder twice: once
        options = await folder_options(ls, [uri for uri, _ in added])
        for (_, path), opts in zip(added, options, strict=True):
            await add_project(ls, path, opts, multi=True)


# -- helpers -----------------------------------------------------------------------------------


def folder_path(uri: str) -> Path | None:
    path = uri_path(uri)
    return path.resolve() if path is not None else None


def workspace_folders(ls: FiskLanguageServer) -> list[tuple[str, Path]]:
    """(uri, resolved path) of each workspace folder, or of ``rootUri``; local folders only."""
    uris = [f.uri for f in ls.workspace.folders.values()] or [ls.workspace.root_uri or ""]
    found: dict[Path, str] = {}
    for uri in uris:
        if uri and (path := folder_path(uri)) is not None:
            found.setdefault(path, uri)
    return [(uri, path) for path, uri in found.items()]


async def folder_options(ls: FiskLanguageServer, uris: list[str]) -> list[Options]:
    """Each folder's ``fisk`` configuration laid over the initialization options."""
    raw = await fetch_configuration(ls, uris)
    errors = list(ls.option_errors)
    options: list[Options] = []
    for item in raw:
        parsed = parse_options(item, ls.options)
        errors.extend(parsed.errors)
        options.append(parsed.options)
    if errors:
        message = bad_options_message(list(dict.fromkeys(errors)))
        ls.show_once(message, types.MessageType.Warning)
    return options


async def fetch_configuration(ls: FiskLanguageServer, uris: list[str]) -> list[Any]:
    workspace = ls.client_capabilities.workspace
    if not uris or not (workspace and workspace.configuration):
        return [None] * len(uris)
    items = [types.ConfigurationItem(scope_uri=uri, section=SECTION) for uri in uris]
    request = ls.workspace_configuration_async(types.ConfigurationParams(items=items))
    try:
        result = await asyncio.wait_for(request, CONFIG_TIMEOUT)
    except Exception as exc:  # a client that cannot answer: initialization options only
        log.info("workspace/configuration failed: %s", exc)
        return [None] * len(uris)
    return list(result) + [None] * (len(uris) - len(result))


def too_broad(folder: Path) -> bool:
    """The filesystem root or the home folder: indexing all of it is never what was meant."""
    broad = {Path(folder.anchor or "/")}
    with contextlib.suppress(RuntimeError, OSError):  # no home directory: just the root
        broad.add(Path.home().resolve())
    return folder in broad


async def add_project(ls: FiskLanguageServer, folder: Path, options: Options, multi: bool) -> None:
    if not folder.is_dir():  # no root and no store for a folder that is not there
        ls.show_once(
            f"fisk: not indexing {folder}: there is no such folder",
            types.MessageType.Warning,
            key=f"missing:{folder}",
        )
        return
    if too_broad(folder) and options.paths is None:
        ls.show_once(
            f"fisk: not indexing {folder}: it is the filesystem root or your home folder; set "
            "`fisk.paths` for it to index chosen folders only",
            types.MessageType.Warning,
            key=f"broad:{folder}",
        )
        return
    label = folder.name if multi else ""
    opened: list[WorkspaceProject] = []  # filled below; its cancel button cancels its run
    hooks = QueueHooks(
        reporter=lambda: LspProgress(ls, label, on_cancel=lambda: [p.cancel() for p in opened]),
        embed_reporter=lambda: EmbedProgress(ls, label),
        on_locked=lambda: ls.show_once(
            f"fisk: another writer is indexing {folder}; changes are kept and retried",
            types.MessageType.Info,
            key=f"locked:{folder}",
        ),
        on_error=lambda exc: ls.show_once(f"fisk: indexing {folder} failed: {exc}"),
    )
    try:
        project = await asyncio.to_thread(open_project, folder, options, hooks)
    except (KnowledgeError, OSError) as exc:
        ls.show_once(f"fisk: cannot open the knowledge store of {folder}: {exc}")
        return
    # Scheduled before the project is listed: fisk.knowledge.status reports the run from the
    # moment a client can see the folder, not from when its progress begins.
    project.request_full()
    used = ls.projects.add(project)
    if used is not project:  # another folder of the same project: one index, one queue
        await asyncio.to_thread(project.close)
        log.info("%s shares the project of %s", folder, used.folder)
        return
    opened.append(project)
    project.start(initial=False)
    settings = project.settings
    log.info("opened %s: store %s, roots %s", folder, settings.store_dir, settings.roots)
