"""Knowledge packs: written once, adopted by another copy of the project (pack.py, unpack.py,
index/adopt.py), and refused whole when they are not data fisk-ls wrote."""

from __future__ import annotations

import gzip
import posixpath
import random
import shutil
import struct
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge import Project, SearchRequest, resolve_settings
from fisk_ls.knowledge.location import Settings
from fisk_ls.knowledge.pack import PackRefused, write_pack
from fisk_ls.knowledge.unpack import key_problem, open_pack
from tests.support.fake_embed_server import FakeEmbedServer

WORDS = [
    "deploy",
    "rollback",
    "canary",
    "helm",
    "chart",
    "token",
    "secret",
    "ingress",
    "gateway",
    "tracing",
    "span",
    "metric",
    "exporter",
    "collector",
    "sampler",
    "baggage",
    "propagator",
    "resource",
    "schema",
    "pipeline",
    "batch",
    "retry",
    "timeout",
    "budget",
    "quota",
    "shard",
    "replica",
    "leader",
    "follower",
    "snapshot",
    "compaction",
    "vacuum",
    "index",
    "cursor",
    "lease",
    "fence",
    "barrier",
    "queue",
    "topic",
    "partition",
    "offset",
    "consumer",
    "producer",
]


VOCABULARY = [f"{w}{n}" for w in WORDS for n in ("", "s", "er", "ing", "ed", "al")]


def make_docs(root: Path, pages: int = 40) -> None:
    rng = random.Random(7)
    for i in range(pages):
        sections = []
        for j in range(3):
            words = " ".join(rng.choice(VOCABULARY) for _ in range(25))
            sections.append(f"## Part {j} of page {i}\n\n{words} page{i}part{j}\n")
        path = root / "docs" / f"area{i % 4}" / f"page{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Page {i}\n\nIntro {i}.\n\n" + "\n".join(sections), encoding="utf-8")


def configure(root: Path, server: FakeEmbedServer | None, prefix: str = "") -> Settings:
    embeddings = (
        f"    embeddings:\n      base_url: {server.base_url}\n      model: fake-embed\n"
        f"      document_prefix: '{prefix}'\n"
        if server is not None
        else ""
    )
    (root / "agent.yaml").write_text(
        "harness:\n  knowledge:\n    enabled: true\n    paths: [docs]\n" + embeddings,
        encoding="utf-8",
    )
    return resolve_settings(root / "agent.yaml")


QUERIES = [f"{a} {b}" for a, b in zip(WORDS[::2], WORDS[1::2], strict=False)][:20]


def top5(settings: Settings) -> dict[str, list[str]]:
    with Project(settings, coarse_knn=False) as project:
        return {q: [h.citation for h in project.search(SearchRequest(q, 5)).hits] for q in QUERIES}


@pytest.fixture
def packed(
    tmp_path: Path, fake_embed: FakeEmbedServer
) -> tuple[Settings, Path, dict[str, list[str]]]:
    """A hybrid index of copy A, its pack, and A's top 5 of every query."""
    a = tmp_path / "a"
    make_docs(a)
    settings = configure(a, fake_embed)
    with Project(settings) as project:
        project.index()
    out = tmp_path / "docs.pack"
    stats = write_pack(settings, out)
    assert stats.manifest.vectors == stats.manifest.chunks > 0
    return settings, out, top5(settings)


def copy_b(tmp_path: Path, a: Path) -> Path:
    b = tmp_path / "b"
    shutil.copytree(a / "docs", b / "docs")
    return b


@pytest.mark.slow
def test_adopting_asks_only_for_the_changed_files_chunks_and_answers_as_the_packer(
    tmp_path: Path,
    packed: tuple[Settings, Path, dict[str, list[str]]],
    fake_embed: FakeEmbedServer,
) -> None:
    settings_a, pack, answers = packed
    b = copy_b(tmp_path, settings_a.project_root)
    changed = b / "docs/area1/page5.md"
    changed.write_text(changed.read_text() + "\nA new closing line about vacuum.\n")
    (b / "docs/area2/page6.md").unlink()
    settings = configure(b, fake_embed)
    assert settings.store_dir != settings_a.store_dir
    fake_embed.reset_stats()
    with Project(settings) as project:
        stats = project.index(pack=pack)
        sources = {s.path: s.chunks for s in project.reader.sources() or []}
    changed_chunks = sources["docs/area1/page5.md"]
    assert stats.adopted is not None
    assert stats.adopted["documents"] == 38
    assert stats.adopted["differ"] == 1
    assert stats.added == 1 and stats.removed == 0
    assert fake_embed.stats()["inputs"] == changed_chunks + 1  # + the dimension probe
    mine = top5(settings)
    cold = tmp_path / "cold"
    shutil.copytree(b / "docs", cold / "docs")
    cold_settings = configure(cold, fake_embed)
    with Project(cold_settings) as project:
        project.index()
    assert top5(cold_settings) == mine  # adopting answers as indexing here would
    # Against the packer's index: the same five hits wherever the changed and the deleted
    # file are not among them (the deleted page's term counts leave the statistics, so two
    # near-equal hits may swap places; here one pair of 20 does).
    unaffected = [
        q
        for q, hits in answers.items()
        if not any("page5.md" in c or "page6.md" in c for c in hits + mine[q])
    ]
    assert len(unaffected) >= 10
    for query in unaffected:
        assert set(mine[query]) == set(answers[query]), query
    assert sum(mine[q] == answers[q] for q in unaffected) >= len(unaffected) - 2
    assert "docs/area2/page6.md" not in sources and len(sources) == 39


@pytest.mark.slow
def test_a_pack_is_deterministic_and_compresses(
    tmp_path: Path,
    packed: tuple[Settings, Path, dict[str, list[str]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings, plain, _ = packed
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    first = write_pack(settings, tmp_path / "one.pack.gz")
    write_pack(settings, tmp_path / "two.pack.gz")
    write_pack(settings, tmp_path / "one.pack")
    write_pack(settings, tmp_path / "two.pack")
    assert (tmp_path / "one.pack.gz").read_bytes() == (tmp_path / "two.pack.gz").read_bytes()
    assert (tmp_path / "one.pack").read_bytes() == (tmp_path / "two.pack").read_bytes()
    assert first.manifest.created == "2023-11-14T22:13:20Z"
    assert first.bytes < plain.stat().st_size
    xz = write_pack(settings, tmp_path / "three.pack.xz")
    with open_pack(xz.path) as opened:
        assert opened.check().chunks == first.manifest.chunks
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".fisk-pack-")]


def test_a_pack_of_another_vector_space_keeps_its_lexical_part_and_says_why(
    tmp_path: Path,
    packed: tuple[Settings, Path, dict[str, list[str]]],
    fake_embed: FakeEmbedServer,
) -> None:
    settings_a, pack, _ = packed
    b = copy_b(tmp_path, settings_a.project_root)
    settings = configure(b, fake_embed, prefix="passage: ")
    fake_embed.reset_stats()
    with Project(settings) as project:
        stats = project.index(pack=pack)
    assert stats.adopted is not None and stats.adopted["documents"] == 40
    assert stats.adopted["vectors"] == 0
    why = [n for n in stats.notes if "vectors were not used" in n]
    assert len(why) == 1 and "document_prefix '' (configured 'passage: ')" in why[0]
    assert fake_embed.stats()["inputs"] == stats.chunks + 1  # embedded here, as configured


def test_a_lexical_project_adopts_the_lexical_part(
    tmp_path: Path, packed: tuple[Settings, Path, dict[str, list[str]]]
) -> None:
    settings_a, pack, _ = packed
    b = copy_b(tmp_path, settings_a.project_root)
    settings = configure(b, None)
    with Project(settings) as project:
        stats = project.index(pack=pack)
        assert project.search(SearchRequest("rollback canary", 3)).hits
    assert stats.adopted is not None and stats.adopted["documents"] == 40
    assert any("no embeddings are configured" in n for n in stats.notes)


def test_an_index_already_current_adopts_nothing_and_a_rerun_is_quiet(
    tmp_path: Path,
    packed: tuple[Settings, Path, dict[str, list[str]]],
    fake_embed: FakeEmbedServer,
) -> None:
    settings, pack, _ = packed
    with Project(settings) as project:
        stats = project.index(pack=pack)
    assert stats.adopted is not None
    assert stats.adopted["documents"] == 0 and stats.adopted["current"] == 40


def test_prebuilt_is_adopted_by_the_first_run_only(
    tmp_path: Path,
    packed: tuple[Settings, Path, dict[str, list[str]]],
    fake_embed: FakeEmbedServer,
) -> None:
    settings_a, pack, _ = packed
    b = copy_b(tmp_path, settings_a.project_root)
    configure(b, fake_embed)
    text = (b / "agent.yaml").read_text()
    (b / "agent.yaml").write_text(text.replace("paths:", f"prebuilt: {pack}\n    paths:"))
    settings = resolve_settings(b / "agent.yaml")
    assert settings.prebuilt == pack
    with Project(settings) as project:
        first = project.index()
        second = project.index()
    assert first.adopted is not None and first.adopted["documents"] == 40
    assert second.adopted is None


def test_a_missing_or_refused_prebuilt_pack_is_a_note_and_the_run_indexes_locally(
    tmp_path: Path, project: Path, store_base: Path
) -> None:
    bad = tmp_path / "bad.pack"
    bad.write_bytes(b"not a pack at all")
    for prebuilt, said in ((tmp_path / "absent.pack", "does not exist"), (bad, "refused")):
        settings = resolve_settings(cwd=project, store_base=store_base)
        settings = settings._replace(prebuilt=prebuilt, store_dir=tmp_path / f"s-{said[:4]}")
        with Project(settings) as proj:
            stats = proj.index()
        assert stats.added > 0
        assert any(said in n and "indexing locally" in n for n in stats.notes)


# -- hostile packs ------------------------------------------------------------------------------


def _edit(pack: Path, out: Path, sql: str, *params: object) -> Path:
    shutil.copy(pack, out)
    conn = apsw.Connection(str(out))
    conn.execute(sql, params)
    conn.close()
    return out


def _written(out: Path, data: bytes) -> Path:
    out.write_bytes(data)
    return out


def _nan(pack: Path, out: Path) -> Path:
    shutil.copy(pack, out)
    conn = apsw.Connection(str(out))
    chash, blob = conn.execute("SELECT hash, embedding FROM vectors LIMIT 1").get
    bad = struct.pack("<f", float("nan")) * (len(blob) // 4)
    conn.execute("UPDATE vectors SET embedding = ? WHERE hash = ?", (bad, chash))
    conn.close()
    return out


HOSTILE: dict[str, tuple[Callable[[Path, Path], Path], str]] = {
    "leaves": (
        lambda p, o: _edit(p, o, "UPDATE documents SET path = '../outside.md' WHERE id = 1"),
        "leaves the project",
    ),
    "absolute": (
        lambda p, o: _edit(p, o, "UPDATE documents SET path = '/etc/passwd' WHERE id = 1"),
        "is absolute",
    ),
    "trigger": (
        lambda p, o: _edit(p, o, "CREATE TRIGGER t AFTER INSERT ON texts BEGIN SELECT 1; END"),
        "unknown trigger 't'",
    ),
    "view": (lambda p, o: _edit(p, o, "CREATE VIEW v AS SELECT 1"), "unknown view 'v'"),
    "table": (lambda p, o: _edit(p, o, "CREATE TABLE extra (x)"), "unknown table 'extra'"),
    "truncated": (
        lambda p, o: _written(o, p.read_bytes()[: p.stat().st_size // 2]),
        "truncated",
    ),
    "truncated-gzip": (
        lambda p, o: _written(o, gzip.compress(p.read_bytes(), mtime=0)[:-100]),
        "truncated or damaged",
    ),
    "nan": (_nan, "NaN"),
    "short-vector": (
        lambda p, o: _edit(
            p,
            o,
            "UPDATE vectors SET embedding = substr(embedding, 5) WHERE hash IN"
            " (SELECT hash FROM vectors LIMIT 1)",
        ),
        "numbers, the manifest says 64",
    ),
    "counts": (
        lambda p, o: _edit(p, o, "UPDATE manifest SET value = '41' WHERE key = 'documents'"),
        "says 41 documents but it holds 40",
    ),
    "text": (
        lambda p, o: _edit(p, o, "UPDATE texts SET body = 'injected' WHERE id = 1"),
        "does not hash to its text",
    ),
    "version": (
        lambda p, o: _edit(p, o, "UPDATE manifest SET value = '9' WHERE key = 'pack_version'"),
        "pack version '9'",
    ),
    "not-sqlite": (lambda p, o: _written(o, b"hello" * 100), "not a knowledge pack"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_pack_is_refused_in_one_line_and_the_index_keeps_answering(
    tmp_path: Path, packed: tuple[Settings, Path, dict[str, list[str]]], case: str
) -> None:
    settings, pack, answers = packed
    make, said = HOSTILE[case]
    hostile = make(pack, tmp_path / f"{case}.pack")
    with Project(settings) as project, pytest.raises(PackRefused) as refused:
        project.index(pack=hostile)
    message = str(refused.value)
    assert said in message and "\n" not in message and "the local index is unchanged" in message
    assert top5(settings) == answers


def test_a_pack_larger_than_the_bound_is_refused_unread(
    tmp_path: Path, packed: tuple[Settings, Path, dict[str, list[str]]]
) -> None:
    _, pack, _ = packed
    with pytest.raises(PackRefused, match="larger than 1,000 bytes"):
        open_pack(pack, limit=1000)


@pytest.mark.parametrize(
    ("key", "ok"),
    [
        ("docs/a.md", True),
        ("a b/ü.md", True),
        ("", False),
        ("/abs.md", False),
        ("C:/x.md", False),
        ("..", False),
        ("docs/../../x.md", False),
        ("docs//x.md", False),
        ("./x.md", False),
        ("docs\\x.md", False),
        ("docs/x\n.md", False),
        ("x" * 5000, False),
    ],
)
def test_pack_paths_must_stay_inside_the_project(key: str, ok: bool) -> None:
    assert (key_problem(key) is None) is ok


@pytest.mark.slow
def test_a_pack_refused_mid_adoption_rolls_back_every_write(
    tmp_path: Path, packed: tuple[Settings, Path, dict[str, list[str]]]
) -> None:
    """The refusal comes after documents were written (the last document's chunk is bad, or
    the counts disagree once all are read): the transaction rolls back, the older local index
    of the copy answers as before, and a good pack is adopted afterwards."""
    settings_a, pack, _ = packed
    b = copy_b(tmp_path, settings_a.project_root)
    settings = configure(b, None)
    pages = {page: page.read_text() for page in (b / "docs").rglob("*.md")}
    for page, text in pages.items():
        page.write_text(text + "\n## Local\n\nA local zeppelin edit.\n")
    with Project(settings) as project:
        project.index()
        before = {s.path: s.chunks for s in project.reader.sources() or []}
        answers = {
            q: [h.citation for h in project.search(SearchRequest(q, 5)).hits] for q in QUERIES
        }
    for page, text in pages.items():
        page.write_text(text)  # back to the pack's bytes: every file would be adopted
    late = _edit(
        pack,
        tmp_path / "late.pack",
        "UPDATE texts SET body = 'x' WHERE id = (SELECT max(id) FROM texts)",
    )
    counts = _edit(
        pack, tmp_path / "counts.pack", "UPDATE manifest SET value = '1' WHERE key = 'texts'"
    )
    for bad, said in ((late, "does not hash to its text"), (counts, "says 1 texts")):
        with Project(settings) as project, pytest.raises(PackRefused, match=said):
            project.index(pack=bad)
        with Project(settings) as project:
            assert {s.path: s.chunks for s in project.reader.sources() or []} == before
            assert {
                q: [h.citation for h in project.search(SearchRequest(q, 5)).hits] for q in QUERIES
            } == answers
    with Project(settings) as project:
        stats = project.index(pack=pack)
    assert stats.adopted is not None and stats.adopted["documents"] == 40


@given(
    st.text(max_size=60)
    | st.lists(st.sampled_from(["a", "..", ".", "", "b c", "/"]), max_size=6).map("/".join)
)
def test_an_accepted_pack_path_never_leaves_the_project(key: str) -> None:
    if key_problem(key) is not None:
        return
    joined = posixpath.normpath(posixpath.join("/project", key))
    assert joined.startswith("/project/") and joined == f"/project/{key}"
