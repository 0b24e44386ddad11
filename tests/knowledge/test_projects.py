"""Several projects searched as one (projects.py): names, merged hits, qualified citations."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ls.knowledge import CitationError, Project, ProjectSet, SearchRequest, resolve_settings
from fisk_ls.knowledge.projects import unique_names
from tests.conftest import write_docs


def test_names_are_the_folders_made_unique() -> None:
    roots = [Path("/a/docs"), Path("/b/docs"), Path("/c/api"), Path("/d/docs")]
    assert unique_names(roots) == ["docs", "docs-2", "api", "docs-3"]


def _project(root: Path, store_base: Path, text: str) -> Project:
    write_docs(root, {"guide.md": text})
    project = Project(resolve_settings(cwd=root, store_base=store_base, discover=False))
    project.index()
    return project


def test_hits_are_merged_by_score_and_citations_name_their_project(
    tmp_path: Path, store_base: Path
) -> None:
    web = _project(tmp_path / "web", store_base, "# Deploy\n\nDeploy the web app with helm.\n")
    api = _project(tmp_path / "api", store_base, "# Deploy\n\nDeploy the api, deploy it well.\n")
    with ProjectSet([web, api]) as group:
        result = group.search(SearchRequest("deploy", 5))
        assert {h.project for h in result.hits} == {"web", "api"}
        scores = [h.score for h in result.hits]
        assert scores == sorted(scores, reverse=True)
        for hit in result.hits:
            assert hit.citation == f"{hit.project}:guide.md#{hit.ordinal}"
            project, chunk = group.show(hit.citation)
            assert project.name == hit.project and chunk.path == "guide.md"
        assert "helm" in group.show("web:guide.md#0")[1].text
        assert "helm" in group.show("guide.md#0")[1].text  # plain: the first project's
        with pytest.raises(CitationError, match="in any project given"):
            group.show("nothing.md#0")
