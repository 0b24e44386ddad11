"""Walk rules, change detection and bad input: each file indexed or skipped with a note."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from fisk_ls.knowledge import (
    Knowledge,
    SearchRequest,
    Settings,
    index_project,
    update_paths,
)
from fisk_ls.knowledge.index import examine
from fisk_ls.knowledge.index.walk import Candidate


def sources(settings: Settings) -> set[str]:
    return {s.path for s in Knowledge(settings).sources() or []}


def test_walk_rules(settings: Settings, project: Path) -> None:
    (project / ".hidden").mkdir()
    (project / ".hidden" / "x.md").write_text("# hidden dir\n")
    (project / "memory").mkdir()
    (project / "memory" / "m.md").write_text("# memory\n")
    (project / "node_modules" / "pkg").mkdir(parents=True)
    (project / "node_modules" / "pkg" / "README.md").write_text("# dep\n")
    (project / "venv").mkdir()
    (project / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (project / "venv" / "doc.md").write_text("# venv\n")
    (project / "image.png").write_bytes(b"\x89PNG")
    (project / "UPPER.MD").write_text("# Upper case extension\n")
    (project / ".dotfile.md").write_text("# dot file is fine\n")
    index_project(settings)
    got = sources(settings)
    assert "UPPER.MD" in got and ".dotfile.md" in got
    assert not any(p.startswith((".hidden", "memory", "node_modules", "venv")) for p in got)


def test_store_inside_project_is_skipped(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fisk_ls.knowledge import resolve_settings

    (project / "agent.yaml").write_text(
        "harness:\n  knowledge:\n    enabled: true\n    directory: kb\n"
    )
    monkeypatch.delenv("FISK_AI_STORE_DIR", raising=False)
    s = resolve_settings(cwd=project)
    assert s.store_dir == project / "kb"
    index_project(s)
    (project / "kb" / "stray.md").write_text("# inside the store\n")
    index_project(s)
    assert not any(p.startswith("kb/") for p in sources(s))


def test_no_change_run_reads_nothing(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    index_project(settings)

    def boom(path: Path, limit: int = 0) -> object:
        raise AssertionError(f"read {path}")

    monkeypatch.setattr(examine, "read_document", boom)
    stats = index_project(settings)
    assert stats.skipped == 3 and stats.added == stats.updated == 0


def test_touched_file_with_same_bytes_is_not_rechunked(settings: Settings, project: Path) -> None:
    index_project(settings)
    p = project / "notes.txt"
    os.utime(p, ns=(1, 1))
    stats = index_project(settings)
    assert stats.skipped == 3 and stats.updated == 0


def test_changed_file_updates(settings: Settings, project: Path) -> None:
    index_project(settings)
    (project / "notes.txt").write_text("Now about parrots.\n")
    stats = index_project(settings)
    assert stats.updated == 1
    assert Knowledge(settings).search(SearchRequest("parrots")).hits[0].path == "notes.txt"
    assert not Knowledge(settings).search(SearchRequest("cats")).hits


BAD_FILES: dict[str, bytes] = {
    "binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR",
    "latin1.md": "caf\xe9 au lait".encode("latin-1"),
    "nul.md": b"text\x00more",
    "huge.md": b"x" * (2 * 1024 * 1024),
}


def test_bad_files_are_skipped_with_notes(settings: Settings, project: Path) -> None:
    for name, data in BAD_FILES.items():
        (project / name).write_bytes(data)
    stats = index_project(settings)
    notes = "\n".join(stats.notes)
    assert "binary" in notes and "not valid UTF-8" in notes and "larger than" in notes
    assert stats.added == 3
    assert sources(settings) == {"docs/design.md", "docs/ops/runbook.md", "notes.txt"}


@pytest.mark.slow
def test_hard_documents_are_indexed(settings: Settings, project: Path) -> None:
    hard = {
        "oneline.md": "y" * (900 * 1024),
        "headings.md": "".join(f"# H{i}\n" for i in range(50_000)),
        "fence.md": "# F\n\n```\n" + "code line\n" * 1000,
        "bigcode.md": "# B\n\n```\n" + ("z" * 99 + "\n") * 9000 + "```\n",
        "lists.md": "".join("  " * i + "- item\n" for i in range(500)),
    }
    for name, text in hard.items():
        (project / name).write_text(text)
    stats = index_project(settings)
    assert stats.added == 3 + len(hard), stats.notes
    kb = Knowledge(settings)
    assert kb.search(SearchRequest("H49999")).hits[0].path == "headings.md"


def test_odd_file_names(settings: Settings, project: Path) -> None:
    names = ["with space.md", "ünïcödé.md", "hash#tag.md"]
    for n in [*names, "new\nline.md"]:
        (project / n).write_text(f"# {n!r}\n\nodd name content\n")
    stats = index_project(settings)
    got = sources(settings)
    for n in names:
        assert n in got
    # A control character in a name is skipped with a note (tests/reliability/test_walk_races.py)
    assert "new\nline.md" not in got
    assert any("new\\nline.md" in n and "control characters" in n for n in stats.notes)
    kb = Knowledge(settings)
    shown = kb.show("hash#tag.md#0")
    assert shown.path == "hash#tag.md" and "odd name" in shown.text


def test_symlinks(settings: Settings, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# secret outside\n")
    os.symlink(outside, project / "link-out")
    os.symlink(outside / "secret.md", project / "file-link.md")
    (project / "loop").mkdir()
    os.symlink(project / "loop", project / "loop" / "again")
    index_project(settings)
    assert not any("secret" in p or "link" in p or "loop" in p for p in sources(settings))


def test_unreadable_file_and_folder(
    settings: Settings, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "locked").mkdir()
    (project / "locked" / "x.md").write_text("# x\n")
    (project / "private.md").write_text("# private\n")
    index_project(settings)
    real_open, real_scandir = os.open, os.scandir

    def fake_open(path: object, *a: object, **kw: object) -> int:
        if str(path).endswith("private.md"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, *a, **kw)  # type: ignore[arg-type]

    def fake_scandir(path: object = ".") -> object:
        if str(path).endswith("locked"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_scandir(path)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "scandir", fake_scandir)
    (project / "private.md").write_text("# private changed\n")
    stats = index_project(settings)
    notes = "\n".join(stats.notes)
    assert "Permission denied" in notes
    # the unreadable changed file is dropped (stale text must not linger); the others remain
    assert "docs/design.md" in sources(settings)


def test_update_paths_handles_change_create_delete_rename(
    settings: Settings, project: Path
) -> None:
    index_project(settings)
    (project / "a.md").write_text("# A\n\nalpha content\n")
    update_paths(settings, [project / "a.md"])
    assert "a.md" in sources(settings)
    (project / "a.md").rename(project / "b.md")
    update_paths(settings, [project / "a.md", project / "b.md"])
    assert "b.md" in sources(settings) and "a.md" not in sources(settings)
    (project / "docs" / "ops" / "runbook.md").unlink()
    (project / "docs" / "ops").rmdir()
    update_paths(settings, [project / "docs" / "ops"])
    assert "docs/ops/runbook.md" not in sources(settings)


def test_dry_run_writes_nothing(settings: Settings) -> None:
    stats = index_project(settings, dry_run=True)
    assert stats.added == 3 and stats.dry_run
    assert Knowledge(settings).search(SearchRequest("queue")).status in (
        "index_empty",
        "index_not_built",
    )


def test_root_outside_project_is_refused(settings: Settings, tmp_path: Path) -> None:
    from fisk_ls.knowledge import ConfigError

    with pytest.raises(ConfigError, match="outside the project root"):
        index_project(settings, [tmp_path])


def test_missing_root_is_a_note(settings: Settings, project: Path) -> None:
    stats = index_project(settings, [project / "docs", project / "missing"])
    assert any("missing" in n for n in stats.notes)
    assert stats.added == 2


def test_parallel_path_matches_inline(
    settings: Settings, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(examine.PARALLEL_MIN_FILES + 10):
        (project / "many" / f"f{i:04}.md").parent.mkdir(exist_ok=True)
        (project / "many" / f"f{i:04}.md").write_text(f"# File {i}\n\nunique{i} words\n")
    stats = index_project(settings)
    assert stats.added == examine.PARALLEL_MIN_FILES + 13
    assert Knowledge(settings).search(SearchRequest("unique123")).hits[0].path == "many/f0123.md"


def test_a_no_change_run_reads_nothing_and_starts_no_worker(
    settings: Settings, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files whose size, mtime and inode match are settled in the indexing process: none is
    handed to the worker side, so a big no-change run spawns no process (speed round 2)."""
    from fisk_ls.knowledge.index import runs

    for i in range(examine.PARALLEL_MIN_FILES + 10):
        (project / f"bulk{i}.md").write_text(f"# Bulk {i}\n\nLine {i}.\n")
    index_project(settings)
    handed: list[int] = []
    started: list[bool] = []
    real = runs.examine_all  # type: ignore[attr-defined]  # the name runs calls
    real_start = examine.Workers.start

    def recording(jobs, **kwargs):  # type: ignore[no-untyped-def]
        handed.append(len(jobs))
        return real(jobs, **kwargs)

    def start(self):  # type: ignore[no-untyped-def]
        started.append(True)
        return real_start(self)

    monkeypatch.setattr(runs, "examine_all", recording)
    monkeypatch.setattr(examine.Workers, "start", start)
    stats = index_project(settings)
    assert handed == [0] and stats.skipped == stats.files and not started
    (project / "bulk3.md").write_text("# Bulk 3\n\nChanged.\n")
    index_project(settings)
    assert handed[-1] == 1  # just the changed file, examined inline


@pytest.mark.slow
def test_worker_processes_yield_every_outcome_in_order(project: Path) -> None:
    """One or two chunking workers: the same outcomes, in the order of the jobs."""
    jobs = []
    for i in range(examine.PARALLEL_MIN_FILES + 7):
        path = project / f"w{i}.md"
        path.write_text(f"# Page {i}\n\n{'word ' * (i % 50)}end {i}.\n")
        st = path.stat()
        jobs.append((f"w{i}.md", Candidate(str(path), st.st_size, st.st_mtime_ns, st.st_ino), None))
    inline = [examine.examine(*job) for job in jobs]
    for workers in (1, 2):
        got = list(examine.examine_all(jobs, batch=16, depth=2, workers=workers))
        assert [o.key for o in got] == [o.key for o in inline]
        assert [o.prepared.rows for o in got if o.prepared] == [
            o.prepared.rows for o in inline if o.prepared
        ]


def test_a_run_with_nothing_changed_writes_nothing(settings: Settings, project: Path) -> None:
    import apsw

    from fisk_ls.knowledge.store_files import db_path
    from fisk_ls.knowledge.writer import COMMITS_KEY

    def commits() -> int:
        conn = apsw.Connection(str(db_path(settings.store_dir)), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            sql = "SELECT value FROM rag_meta WHERE key = ?"
            return int(conn.execute(sql, (COMMITS_KEY,)).get)
        finally:
            conn.close()

    index_project(settings)
    before = commits()
    stats = index_project(settings)
    assert stats.skipped == stats.files and stats.added == stats.updated == 0
    assert commits() == before
    (project / "new.md").write_text("# New\n\nA page added later.\n")
    assert index_project(settings).added == 1 and commits() > before


def test_repeated_chunks_get_the_fields_computed_for_them_alone(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copies of a page (versioned docs) reuse a chunk's derived fields through ``Repeats``;
    the rows are those each file gets on its own, also once the memory starts over."""
    page = "# Get-Thing\n\n## SYNOPSIS\n\nGets a thing, see [docs](https://x.example/a?v={v}).\n"
    jobs = [
        _copy_job(
            project, i, page.format(v=i % 2) + ("\n## 日本語\n\n説明です。\n" if i % 3 else "")
        )
        for i in range(6)
    ]
    alone = [examine.examine(*job) for job in jobs]
    monkeypatch.setattr(examine, "DERIVED_MAX", 2)
    repeats = examine.Repeats()
    shared = [examine.examine(*job, repeats) for job in jobs]
    assert [o.prepared.rows for o in shared if o.prepared] == [
        o.prepared.rows for o in alone if o.prepared
    ]
    assert 0 < len(repeats.known) <= 2


def test_a_page_repeated_under_new_front_matter_is_chunked_once(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body already chunked in the run, under front matter of the same length and title,
    takes its rows from ``Repeats``; a new title or a longer front matter (the line numbers
    move) is chunked anew; the rows are those each file gets on its own, also once the memory
    is full and lets the oldest go."""
    body = "Intro text.\n\n## SYNOPSIS\n\nGets a thing.\n\n```powershell\nGet-Thing\n```\n"
    fronts = [
        "---\ntitle: Get-Thing\nms.date: 2024-01-0{i}\n---\n",
        "---\ntitle: Get-Thing\nms.date: 2024-01-0{i}\n---\n",
        "---\ntitle: Get-Other\nms.date: 2024-01-0{i}\n---\n",
        "---\ntitle: Get-Thing\nms.date: 2024-01-0{i}\nauthor: x\n---\n",
        "",
        "---\ntitle: Get-Thing\nms.date: 2024-01-0{i}\ntags: [a, b]\n---\n",
    ]
    jobs = [_copy_job(project, i, front.format(i=i) + body) for i, front in enumerate(fronts)]
    alone = [examine.examine(*job) for job in jobs]
    repeats = examine.Repeats()
    shared = [examine.examine(*job, repeats) for job in jobs]
    assert [o.prepared for o in shared] == [o.prepared for o in alone]
    assert len(repeats.documents) == 4  # v0 and v1 share one body; v5 has v3's length
    assert shared[0].prepared and shared[1].prepared
    assert shared[0].prepared.rows == shared[1].prepared.rows
    assert shared[0].prepared.rows is not shared[1].prepared.rows  # each outcome its own list
    assert alone[0].prepared is not None
    one = sum(len(row.body) for row in alone[0].prepared.rows)  # every copy's body is as long
    monkeypatch.setattr(examine, "DOCUMENTS_MAX_CHARS", one)  # room for one: the oldest go
    small = examine.Repeats()
    assert [examine.examine(*job, small).prepared for job in jobs] == [o.prepared for o in alone]
    assert len(small.documents) == 1


@pytest.mark.parametrize("built", [False, True])
def test_a_first_build_commits_in_larger_batches(
    settings: Settings, project: Path, monkeypatch: pytest.MonkeyPatch, built: bool
) -> None:
    from fisk_ls.knowledge.index import runs
    from fisk_ls.knowledge.writer import Writer

    if built:
        index_project(settings)
        (project / "later.md").write_text("# Later\n\nA page added after the first build.\n")
    asked: list[tuple[object, ...]] = []
    real = Writer.batch

    def batch(self: Writer, *args: object) -> object:
        asked.append(args)
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Writer, "batch", batch)
    index_project(settings)
    assert asked == [() if built else runs.FIRST_BUILD_BATCH]


def _copy_job(project: Path, i: int, text: str) -> tuple[str, Candidate, None]:
    """``examine``'s arguments for copy ``i`` of a page (``v{i}/Get-Thing.md``) holding ``text``."""
    path = project / f"v{i}" / "Get-Thing.md"
    path.parent.mkdir()
    path.write_text(text)
    st = path.stat()
    return f"v{i}/Get-Thing.md", Candidate(str(path), st.st_size, st.st_mtime_ns, st.st_ino), None


def _many(project: Path, count: int) -> None:
    for i in range(count):
        (project / "many" / f"f{i:04}.md").parent.mkdir(exist_ok=True)
        (project / "many" / f"f{i:04}.md").write_text(f"# File {i}\n\nunique{i} words\n")


@pytest.mark.slow
def test_a_first_build_starts_its_worker_during_the_walk(
    settings: Settings, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker of a first build is started once the walk has found enough files, before the
    run plans its writes, and has exited when the run returns."""
    import multiprocessing

    from fisk_ls.knowledge.index.stats import IndexReporter

    _many(project, examine.PARALLEL_MIN_FILES + 10)
    events: list[str] = []
    real_start, real_plan = examine.Workers.start, IndexReporter.on_plan

    def start(self: examine.Workers) -> object:
        events.append("start")
        return real_start(self)

    def on_plan(self: IndexReporter, total: int) -> None:
        events.append("plan")
        real_plan(self, total)

    monkeypatch.setattr(examine.Workers, "start", start)
    monkeypatch.setattr(IndexReporter, "on_plan", on_plan)
    stats = index_project(settings)
    assert events[0] == "start" and "plan" in events
    assert stats.added == examine.PARALLEL_MIN_FILES + 13
    assert multiprocessing.active_children() == []


@pytest.mark.slow
def test_a_worker_that_dies_fails_the_run_and_leaves_no_process(project: Path) -> None:
    """A chunking worker killed under a started ``Workers`` surfaces as the pool's error from
    ``examine_all``; closing waits for every process."""
    import multiprocessing
    from concurrent.futures.process import BrokenProcessPool

    _many(project, examine.PARALLEL_MIN_FILES + 10)
    jobs = []
    for path in sorted((project / "many").iterdir()):
        st = path.stat()
        jobs.append((path.name, Candidate(str(path), st.st_size, st.st_mtime_ns, st.st_ino), None))
    with examine.Workers() as workers:
        workers.start()
        for child in multiprocessing.active_children():
            child.kill()
        with pytest.raises(BrokenProcessPool):
            list(examine.examine_all(jobs, batch=16, depth=2, workers=workers))
    assert multiprocessing.active_children() == []
