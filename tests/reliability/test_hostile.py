"""Hostile queries, arguments and configuration: a clear error or a result, never a traceback,
never a file outside the indexed documents, never a secret in the output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fisk_ls.agent.tool import KnowledgeTool, ToolInputError
from fisk_ls.knowledge import Knowledge, SearchRequest, Settings, index
from tests.support.fake_embed_server import FakeEmbedServer

SECRET = "sk-test-DO-NOT-LEAK-7f3a9"


def cli(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


HOSTILE = [
    "x" * 100_000,
    "\x00\x01\x02\x1b[31m\x7f\u202e",
    '"' * 1000,
    "AND OR NOT NEAR ( ) * ^ : { } [ ] + - ' ` ~ | \\ /",
    "NEAR(a b, 3) OR col:x",
    "🔥" * 5000,
    "\u0000",
]


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_queries(settings: Settings, query: str, store_base: Path) -> None:
    index(settings)
    kb = Knowledge(settings)
    assert kb.search(SearchRequest(query)).status in ("ok", "no_terms")
    tool = KnowledgeTool(settings, kb)
    try:
        assert tool.call({"query": query[:2000]})["status"] in ("ok", "no_terms")
    except ToolInputError as exc:  # a query of only whitespace-like characters
        assert "query" in str(exc)
    argv_safe = query.replace("\x00", "")  # argv cannot carry NUL bytes
    env = {"FISK_AI_STORE_DIR": str(store_base)}
    out = cli(settings.project_root, env, "search", argv_safe[:2000] or " ", "--json")
    assert out.returncode == 0 and "Traceback" not in out.stderr
    assert json.loads(out.stdout)["status"] in ("ok", "no_terms")
    if len(argv_safe) > 2000:  # the one query-length rule: a usage error naming the limit
        out = cli(settings.project_root, env, "search", argv_safe[:20000], "--json")
        assert out.returncode == 2 and "Traceback" not in out.stderr
        assert "at most 2,000 characters" in json.loads(out.stdout)["error"]


def test_top_k_out_of_range(settings: Settings, store_base: Path) -> None:
    index(settings)
    env = {"FISK_AI_STORE_DIR": str(store_base)}
    out = cli(settings.project_root, env, "search", "the", "--top-k", "1000", "--json")
    assert out.returncode == 2 and "from 1 to 20" in json.loads(out.stdout)["error"]
    out = cli(settings.project_root, env, "search", "the", "--top-k", "20", "--json")
    assert out.returncode == 0 and len(json.loads(out.stdout)["results"]) <= 20
    bad = cli(settings.project_root, env, "search", "x", "--top-k", "-5")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    with pytest.raises(ToolInputError):
        KnowledgeTool(settings).call({"query": "x", "top_k": 10_000})


@pytest.mark.parametrize(
    "citation",
    [
        "../../etc/passwd#0",
        "/etc/passwd#0",
        "docs/../../../etc/hosts#0",
        "C:\\Windows\\x.md#0",
        "notes.txt#99999999999999999999",
        "docs/design.md#-1",
        "#",
        "\x01#0",
    ],
)
def test_hostile_citations(settings: Settings, citation: str, store_base: Path) -> None:
    index(settings)
    out = cli(settings.project_root, {"FISK_AI_STORE_DIR": str(store_base)}, "show", citation)
    assert out.returncode == 1 and out.stderr.startswith("error:")
    assert "root:" not in out.stdout and "Traceback" not in out.stderr


def test_citation_of_another_root(settings: Settings, tmp_path: Path, store_base: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "private.md").write_text("# Private\n\nother project secret\n")
    from fisk_ls.knowledge import resolve_settings

    index(resolve_settings(cwd=other, store_base=store_base))
    index(settings)
    out = cli(settings.project_root, {"FISK_AI_STORE_DIR": str(store_base)}, "show", "private.md#0")
    assert out.returncode == 1 and "secret" not in out.stdout


def agent_yaml(root: Path, base_url: str, key_env: str = "") -> None:
    extra = f"      api_key_env: {key_env}\n" if key_env else ""
    (root / "agent.yaml").write_text(
        "harness:\n  knowledge:\n    enabled: true\n    embeddings:\n"
        f"      base_url: {base_url}\n      model: fake-embed\n      timeout: 2s\n{extra}"
    )


def test_api_key_never_printed(
    project: Path, fake_embed: FakeEmbedServer, store_base: Path
) -> None:
    fake_embed.configure(api_key="the-right-key")
    agent_yaml(project, fake_embed.base_url, "FISK_TEST_KEY")
    env = {"FISK_AI_STORE_DIR": str(store_base), "FISK_TEST_KEY": SECRET}
    for args in (["index"], ["index", "--json"], ["doctor"], ["doctor", "--json"], ["search", "x"]):
        out = cli(project, env, *args)
        assert SECRET not in out.stdout + out.stderr, args
        assert "Traceback" not in out.stderr
    assert cli(project, env, "index").returncode == 1  # 401 is loud


def test_plain_http_to_a_remote_host_is_refused(project: Path, store_base: Path) -> None:
    agent_yaml(project, "http://docs-embeddings.invalid/v1")
    out = cli(project, {"FISK_AI_STORE_DIR": str(store_base)}, "index")
    assert out.returncode == 1 and "https" in out.stderr and "Traceback" not in out.stderr


def test_userinfo_in_url_is_refused(project: Path, store_base: Path) -> None:
    agent_yaml(project, "https://user:pw@embeddings.invalid/v1")
    out = cli(project, {"FISK_AI_STORE_DIR": str(store_base)}, "search", "x")
    assert out.returncode == 1 and "pw" not in out.stderr


def hostile_documents(docs: Path) -> None:
    """Documents that make a full-text index large for their size: random CJK (every bigram a
    new term), a million characters of distinct tokens, one token as long as a file, one word
    repeated, and thousands of one-word sections."""
    import random

    rnd = random.Random(7)
    size = 900_000
    docs.mkdir(exist_ok=True)
    cjk = "".join(chr(0x4E00 + rnd.randrange(20_000)) for _ in range(size // 3))
    (docs / "cjk.md").write_text(f"# 中文\n\n{cjk}\n")
    (docs / "distinct.md").write_text("# D\n\n" + " ".join(f"t{j:07d}" for j in range(size // 9)))
    (docs / "one-token.md").write_text("# O\n\n" + "x" * size + "\n")
    (docs / "repeat.md").write_text("# R\n\n" + "walrus " * (size // 7) + "\n")
    (docs / "tiny.md").write_text("".join(f"# H{k}\n\nw{k}\n\n" for k in range(size // 16)))


def test_doctor_on_hostile_documents_returns(project: Path, store_base: Path) -> None:
    """doctor's full-text comparison is FTS5's own, bounded by a CPU budget: on documents
    built to blow up an index it answers, sound, with a clear line if it stopped early."""
    hostile_documents(project / "docs")
    env = {"FISK_AI_STORE_DIR": str(store_base)}
    assert cli(project, env, "index").returncode == 0
    for args in (["doctor", "--json"], ["doctor", "--full", "--json"]):
        out = cli(project, env, *args)
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
        report = json.loads(out.stdout)
        checks = {c["name"]: c for c in report["checks"]}
        assert report["ok"] and checks["FTS consistency"]["ok"]
        stopped = checks.get("FTS comparison")
        assert stopped is None or "doctor --full" in stopped["detail"]
        if args[1] == "--full":
            assert stopped is None and "agree" in checks["FTS consistency"]["detail"]
