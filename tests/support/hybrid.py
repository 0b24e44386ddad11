"""Index runs and readers with the embedder the settings ask for, as a ``Project`` makes it:
for tests that build and search a hybrid store one call at a time. The product makes its one
embedder in ``Project`` and passes it down; the core's functions take what they are given."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fisk_ls.knowledge import IndexStats, Knowledge, Project, Settings
from fisk_ls.knowledge import index_project as core_index_project
from fisk_ls.knowledge import update_paths as core_update_paths
from fisk_ls.knowledge.query_vectors import QueryEmbedder
from fisk_ls.knowledge.vectors.providers import make_embedder


def index_project(
    settings: Settings, roots: Iterable[Path] | None = None, **options: Any
) -> IndexStats:
    """``index_project`` with the project's embedder unless one is given."""
    if "embedder" in options:
        return core_index_project(settings, roots, **options)
    with Project(settings) as project:
        return core_index_project(settings, roots, embedder=project.embedder(), **options)


def update_paths(settings: Settings, paths: Iterable[Path], **options: Any) -> IndexStats:
    """``update_paths`` with the project's embedder unless one is given."""
    if "embedder" in options:
        return core_update_paths(settings, paths, **options)
    with Project(settings) as project:
        return core_update_paths(settings, paths, embedder=project.embedder(), **options)


def reader(settings: Settings, embedder: QueryEmbedder | None = None, **options: Any) -> Knowledge:
    """A reader whose query embedder is the one given, else the one the settings ask for."""
    return Knowledge(settings, embedder or make_embedder(settings), **options)
