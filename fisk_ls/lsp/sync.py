"""Freshness from the client: didSave and didChangeWatchedFiles → the projects' queues.

``workspace/didChangeWatchedFiles`` is registered dynamically (for document globs and the
ignore files) when the client allows it. Folder moves and deletes the client does not report
reach the queue through the server's own watcher (knowledge/index/watcher.py).
"""

from __future__ import annotations

import logging

from lsprotocol import types

from .convert import uri_path
from .server import FiskLanguageServer

log = logging.getLogger(__name__)
GLOB = "**/*.{md,markdown,txt,text}"
IGNORE_GLOB = "**/{.gitignore,.fiskignore}"
"""An edited ignore file changes which files are documents: the queue answers with a full run."""
REGISTRATION_ID = "fisk-watched-documents"


def register(ls: FiskLanguageServer) -> None:
    ls.feature(types.TEXT_DOCUMENT_DID_SAVE)(did_save)
    ls.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(did_change_watched_files)


def did_save(ls: FiskLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    if (path := uri_path(params.text_document.uri)) is not None:
        ls.projects.add_paths([path])


def did_change_watched_files(
    ls: FiskLanguageServer, params: types.DidChangeWatchedFilesParams
) -> None:
    paths = [p for change in params.changes if (p := uri_path(change.uri)) is not None]
    ls.projects.add_paths(paths)


async def register_watched_files(ls: FiskLanguageServer) -> None:
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if not (watched and watched.dynamic_registration):
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[
            types.FileSystemWatcher(glob_pattern=GLOB),
            types.FileSystemWatcher(glob_pattern=IGNORE_GLOB),
        ]
    )
    registration = types.Registration(
        id=REGISTRATION_ID,
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=options,
    )
    try:
        await ls.client_register_capability_async(
            types.RegistrationParams(registrations=[registration])
        )
    except Exception as exc:  # the server's own watcher still covers changes
        log.info("could not register for watched files: %s", exc)
