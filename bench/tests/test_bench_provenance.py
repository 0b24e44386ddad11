"""A result's stamp (bench/provenance.py) and the stale tables bench/report.py marks or refuses,
in a temporary git repository: a table is stale when what it measures changed after (or apart
from) what was measured, by content."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import provenance
import pytest
import report

BENCH = Path(__file__).resolve().parents[1]


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    if date:
        env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env
    ).stdout


def commit(
    repo: Path,
    message: str,
    files: dict[str, str] | None = None,
    date: str = "2026-01-01T00:00:00Z",
) -> None:
    for rel, text in (files or {}).items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message, date=date)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a measured module, a skipped one beside it and an unmeasured one."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    commit(root, "first", {"src/search.py": "a\n", "src/skip.py": "a\n", "docs/x.md": "a\n"})
    return root


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> report.Table:
    """One table reading x.json and measuring src/ without src/skip.py."""

    def render(folder: Path) -> list[str]:
        return (
            ["## Searching", "", "Some words.", "", "| a |", "|---|", "| 1 |"]
            if (folder / "x.json").exists()
            else []
        )

    t = report.Table(("x.json",), ("src", "!src/skip.py"), render)
    monkeypatch.setattr(report, "TABLES", [t])
    return t


def measure(repo: Path, results: Path, stamp: provenance.Stamp | None = None) -> None:
    results.mkdir(exist_ok=True)
    (results / "x.json").write_text('{"p50_ms": 1}\n')
    provenance.stamp_file(results / "x.json", stamp or provenance.current(repo, ("src",)))


def marks(results: Path, repo: Path) -> list[str]:
    return [line for line in report.render(results, repo).splitlines() if line.startswith(">")]


def test_a_result_measured_at_head_is_fresh(
    repo: Path, table: report.Table, tmp_path: Path
) -> None:
    measure(repo, tmp_path / "results")
    stamp = provenance.Stamp.of(json.loads((tmp_path / "results" / "x.json").read_text()))
    assert stamp is not None and stamp.uncommitted == {}
    assert stamp.commit == git(repo, "rev-parse", "HEAD").strip()
    assert marks(tmp_path / "results", repo) == []


def test_a_later_commit_to_a_measured_path_marks_the_table_under_its_heading(
    repo: Path, table: report.Table, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    measure(repo, results)
    head = git(repo, "rev-parse", "--short=7", "HEAD").strip()
    commit(repo, "unmeasured", {"docs/x.md": "b\n", "src/skip.py": "b\n"})
    assert marks(results, repo) == []
    commit(repo, "measured", {"src/search.py": "b\n", "src/new.py": "new\n"})
    text = report.render(results, repo)
    assert text.splitlines()[report.HEADER.__len__() + 1 :][:3] == [
        "## Searching",
        "",
        f"> **Stale:** measured at {head} ({json.loads((results / 'x.json').read_text())['measured']['date']}), "
        "before changes to src/new.py, src/search.py",
    ]


def test_an_uncommitted_change_counts_and_one_measured_as_it_is_does_not(
    repo: Path, table: report.Table, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    measure(repo, results)
    (repo / "src" / "search.py").write_text("edited\n")
    assert [m.split("before changes to ")[1] for m in marks(results, repo)] == ["src/search.py"]
    measure(repo, results)  # measured with the edit: its content is recorded
    stamp = provenance.Stamp.of(json.loads((results / "x.json").read_text()))
    assert stamp is not None and list(stamp.uncommitted) == ["src/search.py"]
    assert marks(results, repo) == []
    commit(repo, "the measured edit committed as it was")
    assert marks(results, repo) == []
    (repo / "src" / "search.py").write_text("a\n")  # back to the commit's: not what was measured
    assert len(marks(results, repo)) == 1


def test_a_stamp_whose_commit_is_gone_falls_back_on_commit_times(
    repo: Path, table: report.Table, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    gone = provenance.Stamp("0" * 40, 1_800_000_000, "2027-01-15 08:00 UTC", {})  # 2027-01-15
    measure(repo, results, gone)
    commit(repo, "before the stamp", {"src/search.py": "b\n"}, date="2027-01-01T00:00:00Z")
    assert marks(results, repo) == []
    commit(repo, "after it", {"src/new.py": "c\n"}, date="2027-02-01T00:00:00Z")
    assert [m.split("before changes to ")[1] for m in marks(results, repo)] == ["src/new.py"]


def test_an_unstamped_result_is_marked_and_strict_refuses_stale_tables(
    repo: Path, table: report.Table, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "x.json").write_text('{"p50_ms": 1}\n')
    assert marks(results, repo) == ["> **Stale:** with no record of the commit it was measured at"]
    with pytest.raises(report.StaleTables, match="Searching: with no record"):
        report.render(results, repo, strict=True)
    measure(repo, results)
    assert report.render(results, repo, strict=True).count("## Searching") == 1


def test_the_command_line_refuses_stale_tables_only_with_strict(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "topk.json").write_text((BENCH / "results" / "topk.json").read_text())
    data: dict[str, Any] = json.loads((results / "topk.json").read_text())
    del data[provenance.KEY]
    (results / "topk.json").write_text(json.dumps(data))
    run = [sys.executable, str(BENCH / "report.py"), str(results)]
    plain = subprocess.run(run, capture_output=True, text=True, check=True)
    assert "> **Stale:** with no record of the commit" in plain.stdout
    strict = subprocess.run([*run, "--strict"], capture_output=True, text=True)
    assert strict.returncode == 1 and strict.stdout == ""
    assert "Exact top-k BM25" in strict.stderr


def test_covers_follows_prefixes_and_exclusions() -> None:
    paths = ("fisk_ls/knowledge", "!fisk_ls/knowledge/index", "bench/floor.py")
    assert provenance.covers(paths, "fisk_ls/knowledge/search.py")
    assert provenance.covers(paths, "bench/floor.py")
    assert not provenance.covers(paths, "fisk_ls/knowledge/index/chunker.py")
    assert not provenance.covers(paths, "fisk_ls/knowledgebase.py")
    assert not provenance.covers(paths, "bench/floor.pyc")


def test_every_path_a_table_measures_exists() -> None:
    """A renamed or moved module must be renamed here too, or its table would stop noticing."""
    root = BENCH.parent
    missing = [
        p.lstrip("!")
        for t in report.TABLES
        for p in t.measures
        if not (root / p.lstrip("!")).exists()
    ]
    assert missing == []


def test_every_result_is_stamped_and_read_by_a_table() -> None:
    read = {f for t in report.TABLES for f in t.files}
    for path in sorted((BENCH / "results").glob("*.json")):
        if path.name in ("run.json", "embeddings.json"):
            continue
        assert path.name in read, f"{path.name}: no table in bench/report.py reads it"
        assert provenance.Stamp.of(json.loads(path.read_text())), f"{path.name} has no stamp"
