"""agent.yaml parsing and store-directory resolution (checklist 14–17, 60–68)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ls.knowledge.config import (
    KNOWLEDGE_SEARCH,
    parse_agent_config,
    parse_duration,
)
from fisk_ls.knowledge.errors import ConfigError
from fisk_ls.knowledge.location import (
    configured_store,
    document_key,
    resolve_settings,
    zero_config_store,
)


def cfg(knowledge: object = None, **top: object):  # type: ignore[no-untyped-def]
    data: dict[str, object] = dict(top)
    if knowledge is not None:
        data["harness"] = {"knowledge": knowledge}
    return parse_agent_config(data)


def test_disabled_by_default_and_lexical_without_embeddings() -> None:  # 60
    assert cfg().knowledge.enabled is False
    assert cfg({"enabled": False}).knowledge.enabled is False
    k = cfg({"enabled": True}).knowledge
    assert k.enabled and k.embeddings is None and k.top_k == 5 and k.max_injected_tokens == 6000


def test_a_block_without_enabled_counts_as_enabled() -> None:
    """The README's one line, `embeddings: {provider: builtin}`, is enough on its own."""
    k = cfg({"embeddings": {"provider": "builtin"}}).knowledge
    assert k.enabled and k.embeddings is not None and k.embeddings.builtin
    assert cfg({}).knowledge.enabled
    assert cfg({"enabled": False, "embeddings": {"provider": "builtin"}}).knowledge.enabled is False


def test_embeddings_turn_on_vectors_with_default_timeout() -> None:  # 61, 62
    k = cfg(
        {"enabled": True, "embeddings": {"base_url": "http://127.0.0.1:1/v1", "model": "m"}}
    ).knowledge
    assert k.embeddings is not None
    assert k.embeddings.timeout == 30.0 and k.embeddings.query_timeout == 2.0


@pytest.mark.parametrize("bad", ["soon", "-1s", "0", "1d", True])
def test_bad_timeout(bad: object) -> None:  # 63
    with pytest.raises(ConfigError, match="timeout"):
        cfg({"enabled": True, "embeddings": {"base_url": "http://x", "model": "m", "timeout": bad}})


def test_durations() -> None:
    assert parse_duration("500ms", "t") == 0.5
    assert parse_duration("2m", "t") == 120
    assert parse_duration(3, "t") == 3.0


def test_unknown_keys_are_errors() -> None:
    with pytest.raises(ConfigError, match="unknown key toppk"):
        cfg({"enabled": True, "toppk": 3})
    with pytest.raises(ConfigError, match="unknown key"):
        cfg({"enabled": True, "embeddings": {"base_url": "x", "model": "m", "dims": 3}})
    with pytest.raises(ConfigError, match="empty"):
        cfg({"enabled": True, "embeddings": None})


@pytest.mark.parametrize("bad", [0, 99, -3, "5", True])
def test_top_k_out_of_range_is_a_config_error(bad: object) -> None:
    with pytest.raises(
        ConfigError, match=r"harness\.knowledge\.top_k: expected an integer from 1 to 20"
    ):
        cfg({"enabled": True, "top_k": bad})
    assert cfg({"enabled": True, "top_k": 20}).knowledge.top_k == 20


def test_allowlist_normalised() -> None:  # 64
    a = cfg(
        {"enabled": True},
        expose={"agent": {"mcp": {"builtins": [KNOWLEDGE_SEARCH, "  knowledge_search "]}}},
    )
    assert a.mcp_builtins == (KNOWLEDGE_SEARCH,)


@pytest.mark.parametrize("name", ["memory_write", "nope"])
def test_allowlist_rejects_others(name: str) -> None:  # 65, 66
    with pytest.raises(ConfigError, match=r"cannot be exposed over MCP.*knowledge_search"):
        cfg({"enabled": True}, expose={"agent": {"mcp": {"builtins": [name]}}})


def test_allowlist_needs_knowledge() -> None:  # 67
    with pytest.raises(ConfigError, match="not enabled"):
        cfg({"enabled": False}, expose={"agent": {"mcp": {"builtins": [KNOWLEDGE_SEARCH]}}})


def test_empty_allowlist() -> None:  # 68
    assert cfg({"enabled": True}, expose={"agent": {"mcp": {"builtins": []}}}).mcp_builtins == ()


def test_identity() -> None:
    assert cfg({"enabled": True}).identity == "fisk-ai"
    assert cfg({"enabled": True}, application_path="/srv/app-x").identity == "app-x"
    with pytest.raises(ConfigError, match="identity"):
        cfg({"enabled": True}, identity="bad name")


def test_store_directory_resolution(tmp_path: Path) -> None:  # 14–17
    a = cfg({"enabled": True}, identity="bot")
    assert configured_store(tmp_path, a, Path("/srv/base")) == Path("/srv/base/knowledge/bot")
    rel = cfg({"enabled": True, "directory": "idx"})
    assert configured_store(tmp_path, rel, Path("/srv/base")) == Path("/srv/base/idx")
    ab = cfg({"enabled": True, "directory": "/abs/idx"})
    assert configured_store(tmp_path, ab, Path("/srv/base")) == Path("/abs/idx")
    assert configured_store(tmp_path, a, None) == tmp_path / "knowledge/bot"


def test_zero_config(tmp_path: Path) -> None:
    s = resolve_settings(cwd=tmp_path, store_base=tmp_path / "base")
    assert s.project_root == tmp_path.resolve()
    assert s.roots == (tmp_path.resolve(),)
    assert s.store_dir == zero_config_store(tmp_path.resolve(), tmp_path / "base")
    assert s.store_dir.parent == tmp_path / "base"
    assert not s.hybrid


def test_config_file_is_discovered_and_paths_resolve_against_it(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(
        "identity: demo\nharness:\n  knowledge:\n    enabled: true\n    paths: [docs]\n"
    )
    sub = tmp_path / "sub"
    sub.mkdir()
    s = resolve_settings(cwd=tmp_path)
    assert s.roots == (tmp_path.resolve() / "docs",)
    assert s.store_dir == tmp_path.resolve() / "knowledge" / "demo"
    s2 = resolve_settings(tmp_path / "agent.yaml", cwd=sub)
    assert s2.project_root == tmp_path.resolve()


def test_config_with_knowledge_off_is_refused(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("harness: {}\n")
    with pytest.raises(ConfigError, match=r"add a harness\.knowledge block"):
        resolve_settings(cwd=tmp_path)
    (tmp_path / "agent.yaml").write_text("harness: {knowledge: {enabled: false}}\n")
    with pytest.raises(ConfigError, match="is not enabled"):
        resolve_settings(cwd=tmp_path)


def test_relative_store_base_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="absolute"):
        resolve_settings(cwd=tmp_path, store_base=Path("rel"))


def test_invalid_yaml(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text("harness: [unclosed\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        resolve_settings(cwd=tmp_path)


def test_document_keys(tmp_path: Path) -> None:
    assert document_key(tmp_path / "a" / "b#c.md", tmp_path) == "a/b#c.md"
    with pytest.raises(ConfigError, match="outside the project root"):
        document_key(tmp_path.parent / "x.md", tmp_path)


@pytest.mark.parametrize(
    ("url", "phrase"),
    [
        ("http://docs.example.com/v1", "plain http"),
        ("https://bob:pw@api.example.com/v1", "user name or password"),
        ("ftp://api.example.com/v1", "http(s) URL"),
        ("https://api.example.com/v1?key=1", "query string"),
    ],
)
def test_embeddings_url_is_checked_when_agent_yaml_is_read(
    tmp_path: Path, url: str, phrase: str
) -> None:
    (tmp_path / "agent.yaml").write_text(
        "harness:\n  knowledge:\n    enabled: true\n    embeddings:\n"
        f"      base_url: '{url}'\n      model: m\n"
    )
    with pytest.raises(ConfigError) as caught:
        resolve_settings(cwd=tmp_path)
    message = str(caught.value)
    assert str(tmp_path / "agent.yaml") in message
    assert "harness.knowledge.embeddings.base_url" in message and phrase in message
    assert "pw" not in message and "key=1" not in message
