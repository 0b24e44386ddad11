"""The real `fisk-ai` process says what is true: words no document holds are not "no searchable
words", and a search while another process indexes says how far that run got instead of "the
index is empty" (the run is held at a step by an injected reporter, not by sleeps)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from fisk_ls.knowledge import RunReporter, Settings, index_project
from fisk_ls.knowledge.notices import NO_MATCH, NO_MATCH_IN_SCOPE, NO_TERMS_SENTENCE
from tests.support.cli import js, run
from tests.support.waiting import HANG_GUARD


def test_missing_words_and_no_words_are_told_apart(project: Path, store_base: Path) -> None:
    js(project, "index")
    missing = js(project, "search", "zeppelin")
    assert (missing["status"], missing["note"], missing["results"]) == ("ok", NO_MATCH, [])
    assert missing["indexing"] is None
    assert run(project, "knowledge", "search", "zeppelin").stdout.strip() == NO_MATCH
    scoped = js(project, "search", "zeppelin", "--path", "docs")
    assert scoped["note"] == NO_MATCH_IN_SCOPE
    nothing = js(project, "search", "?!")
    assert (nothing["status"], nothing["note"]) == ("no_terms", NO_TERMS_SENTENCE)
    assert run(project, "knowledge", "search", "?!").stdout.strip() == NO_TERMS_SENTENCE
    found = js(project, "search", "backpressure")
    assert found["note"] is None and found["results"]


class Hold(RunReporter):
    reached = threading.Event()
    release = threading.Event()

    def on_plan(self, files: int) -> None:
        Hold.reached.set()
        Hold.release.wait(HANG_GUARD)


@pytest.fixture
def held_run(settings: Settings) -> Iterator[None]:
    """An index run of this process held at its plan (the CLI below is another process)."""
    Hold.reached, Hold.release = threading.Event(), threading.Event()
    thread = threading.Thread(target=lambda: index_project(settings, reporter=Hold()))
    thread.start()
    try:
        assert Hold.reached.wait(HANG_GUARD)
        yield
    finally:
        Hold.release.set()
        thread.join(HANG_GUARD)


def test_a_search_while_another_process_indexes(project: Path, held_run: None) -> None:
    out = js(project, "search", "backpressure")
    assert out["status"] == "index_empty"
    assert out["indexing"] == {"files": 0, "total": 3}
    assert out["note"] == "still indexing: 0 of 3 files; nothing is searchable yet"
    text = run(project, "knowledge", "search", "backpressure").stdout.strip()
    assert text == "still indexing: 0 of 3 files; nothing is searchable yet"


def test_results_found_while_another_process_indexes_are_the_ones_so_far(
    project: Path, settings: Settings
) -> None:
    index_project(settings)
    Hold.reached, Hold.release = threading.Event(), threading.Event()
    thread = threading.Thread(target=lambda: index_project(settings, rebuild=True, reporter=Hold()))
    thread.start()
    try:
        assert Hold.reached.wait(HANG_GUARD)
        proc = run(project, "knowledge", "search", "backpressure")
        assert proc.stdout.startswith("docs/design.md#")
        assert "note: still indexing: 0 of 3 files; these are the results so far" in proc.stderr
    finally:
        Hold.release.set()
        thread.join(HANG_GUARD)


def test_a_subfolder_of_an_unmarked_docs_tree_finds_the_index_above(
    tmp_path: Path, store_base: Path
) -> None:
    """No .git, no agent.yaml: the index built at the top is the one a search from a subfolder
    reads (not "not built", and no second index)."""
    top = tmp_path / "manual"
    sub = top / "guide" / "install"
    sub.mkdir(parents=True)
    (top / "intro.md").write_text("# Intro\n\nThe albatross glides.\n")
    (sub / "steps.md").write_text("# Steps\n\nUnpack the kestrel.\n")
    assert js(top, "index")["added"] == 2
    found = js(sub, "search", "albatross")
    assert found["status"] == "ok" and found["results"][0]["path"] == "intro.md"
    stats = js(sub, "stats")
    assert stats["root"] == str(top.resolve())
    assert len(list(store_base.iterdir())) == 1  # one store, the top's


class Watch:
    """`fisk-ai knowledge watch` as a real process, its stdout read line by line."""

    def __init__(self, cwd: Path, *args: str) -> None:
        import queue
        import subprocess
        import sys

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fisk_ls.cli", "knowledge", "watch", "--debounce=200ms", *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        stdout = self.proc.stdout

        def read() -> None:
            for line in stdout or ():
                self.lines.put(line)

        self.reader = threading.Thread(target=read)
        self.reader.start()

    def next(self) -> str:
        import queue

        try:
            return self.lines.get(timeout=HANG_GUARD)  # a hang guard, not a timing assertion
        except queue.Empty:
            raise AssertionError("watch printed nothing more") from None

    def until(self, word: str) -> str:
        while word not in (line := self.next()):
            pass
        return line

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(HANG_GUARD)
        self.reader.join(HANG_GUARD)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe:
                pipe.close()


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
def test_watch_says_what_an_ignore_file_change_removed_and_restored(
    project: Path, store_base: Path, as_json: bool
) -> None:
    import json

    watch = Watch(project, *(["--json"] if as_json else []))
    try:
        watch.until("indexed")
        (project / ".fiskignore").write_text("notes.txt\n")
        line = watch.until("ignore_changed" if as_json else "changed:")
        if as_json:
            event = json.loads(line)
            assert (event["ignore_files"], event["removed"], event["added"]) == (
                [".fiskignore"],
                1,
                0,
            )
        else:
            assert line.rstrip().endswith(".fiskignore changed: 1 file(s) now ignored, removed")
        (project / ".fiskignore").write_text("# nothing ignored\n")
        line = watch.until("ignore_changed" if as_json else "changed:")
        if as_json:
            event = json.loads(line)
            assert (event["removed"], event["added"]) == (0, 1)
        else:
            assert line.rstrip().endswith(
                ".fiskignore changed: 1 file(s) no longer ignored, indexed"
            )
    finally:
        watch.close()


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
def test_watch_embedding_lines_come_every_few_seconds_in_both_modes(
    capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    import json

    from fisk_ls.cli.watch import EmbedLines, Lines

    now = [0.0]
    reporter = EmbedLines(Lines(as_json, clock=lambda: now[0]))
    reporter.begin(0, 1_000)
    for done in range(32, 1_000, 32):
        now[0] += 1.0  # a round a second
        reporter.progress(done, 1_000)
    reporter.progress(1_000, 1_000)
    reporter.end(1_000, 1_000, None)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 8  # begin, every 5 s (rounds 6, 11, ... 31), end
    if as_json:
        events = [json.loads(line) for line in out]
        assert [e["event"] for e in events] == ["embedding"] * 7 + ["embedded"]
        assert events[1] == {"event": "embedding", "embedded": 192, "chunks": 1_000}
    else:
        assert out[1].endswith("embedding: 192 of 1,000 chunks embedded")
        assert out[-1].endswith("embedded: 1,000 of 1,000 chunks embedded")


def test_watch_json_counts_the_backlog_of_the_paths_it_watches(
    project: Path, store_base: Path, fake_embed: object
) -> None:
    import json

    js(project, "index")  # lexical: every chunk, docs/ and notes.txt, waits for a vector
    chunks = {s["path"]: s["chunks"] for s in js(project, "sources")["sources"]}
    under_docs = sum(n for path, n in chunks.items() if path.startswith("docs/"))
    assert under_docs < sum(chunks.values())
    base_url = fake_embed.base_url  # type: ignore[attr-defined]
    (project / "agent.yaml").write_text(
        "harness:\n  knowledge:\n    enabled: true\n    embeddings:\n"
        f"      base_url: {base_url}\n      model: fake-embed\n"
    )
    watch = Watch(project, "docs", "--json")
    try:
        events = [json.loads(watch.until('"embedding"'))]
        events.append(json.loads(watch.until('"embedded"')))
    finally:
        watch.close()
    assert [e["chunks"] for e in events] == [under_docs, under_docs]
    assert events[-1]["embedded"] == under_docs and events[-1]["error"] is None
