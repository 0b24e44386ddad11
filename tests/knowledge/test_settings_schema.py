"""The settings contract: one definition, its JSON Schema export fresh, one rule per boundary."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge import settings_json
from fisk_ls.knowledge import settings_schema as contract
from fisk_ls.knowledge.config import parse_agent_config, parse_embeddings
from fisk_ls.knowledge.errors import ConfigError
from fisk_ls.knowledge.settings_checks import (
    SettingError,
    check_query,
    check_top_k,
    resolve_top_k,
)
from fisk_ls.knowledge.settings_json import SCHEMA_FILE, json_schema, render_schema
from fisk_ls.lsp.options import parse_options


def test_checked_in_schema_is_fresh() -> None:
    assert SCHEMA_FILE.is_file(), f"{SCHEMA_FILE} missing"
    assert SCHEMA_FILE.read_text(encoding="utf-8") == render_schema(), (
        "settings.schema.json is stale: python -m fisk_ls.knowledge.settings_schema --write"
    )
    assert settings_json.main(["--check"]) == 0


def test_schema_is_valid_draft_2020_12_with_camel_case_names() -> None:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    props = schema["properties"]
    assert props["topK"] == {
        "type": "integer",
        "description": contract.TOP_K.description,
        "minimum": 1,
        "maximum": 20,
        "default": 5,
    }
    assert set(props["embeddings"]["properties"]) >= {"baseUrl", "model", "timeout", "queryTimeout"}
    assert schema["$defs"]["query"]["maxLength"] == 2000
    assert all("_" not in name for name in [*props, *props["embeddings"]["properties"]])


@given(st.integers(-1000, 1000))
def test_top_k_same_verdict_everywhere(value: int) -> None:
    """The schema, the request check, agent.yaml and the LSP options agree on every integer."""
    valid = jsonschema.Draft202012Validator(json_schema()).is_valid({"topK": value})
    try:
        check_top_k(value)
        request_ok = True
    except SettingError as exc:
        request_ok = False
        assert "from 1 to 20" in str(exc)
    try:
        parse_agent_config({"harness": {"knowledge": {"enabled": True, "top_k": value}}})
        yaml_ok = True
    except ConfigError as exc:
        yaml_ok = False
        assert "harness.knowledge.top_k" in str(exc) and "from 1 to 20" in str(exc)
    parsed = parse_options({"topK": value})
    lsp_ok = not parsed.errors
    if not lsp_ok:
        assert parsed.options.top_k is None and "fisk.topK" in parsed.errors[0]
    assert valid == request_ok == yaml_ok == lsp_ok == (1 <= value <= 20)


def test_query_length_rule() -> None:
    assert check_query("x" * 2000) == "x" * 2000
    with pytest.raises(SettingError, match="at most 2,000 characters, got 2,001 characters"):
        check_query("x" * 2001)
    assert check_query("   ") == "   "  # blank: the search answers no_terms
    with pytest.raises(SettingError, match="expected a string"):
        check_query(None)


def test_resolve_top_k() -> None:
    assert resolve_top_k(None, 7) == 7 and resolve_top_k(3, 7) == 3
    with pytest.raises(SettingError):
        resolve_top_k(0)


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"max_injected_tokens": 0}, "max_injected_tokens: expected an integer from 1 to 1000000"),
        ({"embeddings": {"base_url": "http://x", "model": "m", "timeout": "2h"}}, "timeout"),
        ({"embeddings": {"base_url": "http://x", "model": "m", "query_timeout": "5m"}}, "60"),
        ({"exclude": "build/"}, "exclude: expected a list"),
    ],
)
def test_agent_yaml_out_of_range_is_a_config_error(block: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_agent_config({"harness": {"knowledge": {"enabled": True, **block}}})


def test_lsp_embeddings_take_the_timeouts() -> None:
    raw = {
        "embeddings": {"baseUrl": "http://e/v1", "model": "m", "timeout": 5, "queryTimeout": 0.5}
    }
    parsed = parse_options(raw)
    assert parsed.errors == [] and parsed.options.embeddings is not None
    config = parsed.options.embeddings.config()
    assert config.timeout == 5.0 and config.query_timeout == 0.5
    bad = parse_options({"embeddings": {"baseUrl": "http://e", "model": "m", "queryTimeout": 99}})
    assert bad.options.embeddings is None
    assert bad.errors == [
        "fisk.embeddings.queryTimeout (expected a number from 0.05 to 60, got 99)"
    ]


@pytest.mark.parametrize(
    "embeddings",
    [
        {"provider": "builtin"},
        {"provider": "builtin", "modelPath": "/models/minilm", "threads": 2},
        {"provider": "builtin", "baseUrl": "http://127.0.0.1:8080/v1"},
        {"baseUrl": "http://127.0.0.1:8080/v1", "model": "m"},
        {"provider": "openai", "baseUrl": "http://127.0.0.1:8080/v1", "model": "m"},
        {"baseUrl": "http://127.0.0.1:8080/v1"},
        {"provider": "openai", "model": "m"},
        {},
    ],
)
def test_embeddings_schema_and_server_agree_on_provider_rules(embeddings: dict[str, Any]) -> None:
    """builtin needs no baseUrl (and refuses one); openai needs baseUrl and model."""
    valid = jsonschema.Draft202012Validator(json_schema()).is_valid({"embeddings": embeddings})
    assert valid == (parse_options({"embeddings": embeddings}).errors == [])
    yaml = {s.name: embeddings[s.wire] for s in contract.EMBEDDINGS if s.wire in embeddings}
    try:
        parse_embeddings(yaml)
        yaml_ok = True
    except ConfigError:
        yaml_ok = False
    assert yaml_ok == valid, "agent.yaml applies the schema's provider rule"


def test_agent_yaml_names_the_rule_in_its_own_spelling() -> None:
    with pytest.raises(ConfigError) as info:
        parse_embeddings({"model": "m"})
    assert str(info.value).startswith(
        "harness.knowledge.embeddings: base_url and model are required, or provider builtin"
    )
    with pytest.raises(ConfigError) as info:
        parse_embeddings({"provider": "builtin", "base_url": "http://x/v1"})
    assert str(info.value).startswith(
        "harness.knowledge.embeddings.base_url: not used with provider builtin"
    )
