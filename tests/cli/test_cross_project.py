"""`fisk-ai knowledge search --project A --project B`: the projects searched as one, each hit
naming its project, and `show --project` opening each citation as search printed it."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import js, run


def _project(root: Path, name: str, docs: dict[str, str]) -> Path:
    folder = root / name
    for rel, text in docs.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    (folder / ".git").mkdir()
    run(folder, "knowledge", "index")
    return folder


def test_search_merges_projects_and_show_opens_each_citation(
    tmp_path: Path, store_base: Path
) -> None:
    a = _project(
        tmp_path, "web", {"docs/deploy.md": "# Deploy\n\nHow we deploy the web app: helm.\n"}
    )
    b = _project(
        tmp_path,
        "api",
        {
            "docs/deploy.md": "# Deploy\n\nHow we deploy the api: terraform.\n",
            "README.md": "# API\n\nNothing about shipping here.\n",
        },
    )
    found = js(tmp_path, "search", "how do we deploy", "--project", str(a), "--project", str(b))
    hits = found["results"]
    assert {h["project"] for h in hits} == {"web", "api"}
    for hit in hits:
        assert hit["citation"] == f"{hit['project']}:{hit['path']}#{hit['ordinal']}"
        shown = js(tmp_path, "show", hit["citation"], "--project", str(a), "--project", str(b))
        assert shown["path"] == hit["path"] and shown["content"]
    text = run(tmp_path, "knowledge", "search", "deploy", "--project", str(a), "--project", str(b))
    assert "web:docs/deploy.md#0" in text.stdout and "api:docs/deploy.md#0" in text.stdout
    plain = js(tmp_path, "show", "docs/deploy.md#0", "--project", str(b), "--project", str(a))
    assert "terraform" in plain["content"]  # a plain citation: the first project that has it


def test_project_names_are_made_unique_and_config_does_not_combine(
    tmp_path: Path, store_base: Path
) -> None:
    a = _project(tmp_path / "one", "docs", {"x.md": "# X\n\nzeppelin one\n"})
    b = _project(tmp_path / "two", "docs", {"x.md": "# X\n\nzeppelin two\n"})
    found = js(tmp_path, "search", "zeppelin", "--project", str(a), "--project", str(b))
    assert sorted(h["project"] for h in found["results"]) == ["docs", "docs-2"]
    bad = run(
        tmp_path,
        "knowledge",
        "search",
        "zeppelin",
        "--project",
        str(a),
        "--config",
        str(a / "agent.yaml"),
        ok=2,
    )
    assert "--config does not combine with --project" in bad.stderr
