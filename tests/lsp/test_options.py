"""The settings parser (initializationOptions / workspace configuration), from plain dicts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fisk_ls.knowledge import Settings
from fisk_ls.knowledge.settings_json import json_schema
from fisk_ls.knowledge.settings_schema import EMBEDDINGS_RULE
from fisk_ls.lsp.options import EmbeddingsOptions, Options, parse_options


def test_empty_and_missing_are_defaults() -> None:
    assert parse_options(None).options == Options()
    assert parse_options({}).options == Options()
    assert parse_options({"topK": None}).errors == []


def test_full_object() -> None:
    parsed = parse_options(
        {
            "paths": ["docs", "README.md"],
            "topK": 7,
            "embeddings": {"baseUrl": " http://e/v1 ", "model": "m", "queryPrefix": "q: "},
            "watch": False,
            "workspaceSymbols": False,
        }
    )
    assert parsed.errors == []
    assert parsed.options == Options(
        paths=("docs", "README.md"),
        top_k=7,
        embeddings=EmbeddingsOptions(base_url="http://e/v1", model="m", query_prefix="q: "),
        watch=False,
        workspace_symbols=False,
    )


def test_builtin_provider_needs_only_its_name() -> None:
    parsed = parse_options(
        {"embeddings": {"provider": "builtin", "modelPath": " /m ", "threads": 1}}
    )
    assert parsed.errors == []
    emb = parsed.options.embeddings
    assert emb == EmbeddingsOptions(provider="builtin", model_path="/m", threads=1)
    cfg = emb.config()
    assert cfg.builtin and cfg.model == "all-MiniLM-L6-v2" and cfg.model_path == "/m"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        pytest.param({"topK": 0}, "fisk.topK", id="topk-zero"),
        pytest.param({"topK": 21}, "fisk.topK", id="topk-big"),
        pytest.param({"topK": True}, "fisk.topK", id="topk-bool"),
        pytest.param({"paths": "docs"}, "fisk.paths", id="paths-str"),
        pytest.param({"watch": "no"}, "fisk.watch", id="watch-str"),
        pytest.param({"workspaceSymbols": 1}, "fisk.workspaceSymbols", id="symbols-int"),
        pytest.param({"embeddings": {"model": "m"}}, "fisk.embeddings", id="no-base-url"),
        pytest.param({"embeddings": {"baseUrl": 1, "model": "m"}}, "baseUrl", id="url-int"),
        pytest.param({"embeddings": []}, "fisk.embeddings", id="embeddings-list"),
        pytest.param({"embeddings": {"provider": "gpu"}}, "provider", id="bad-provider"),
        pytest.param(
            {"embeddings": {"provider": "builtin", "baseUrl": "http://e/v1"}},
            "baseUrl",
            id="builtin-with-url",
        ),
        pytest.param(
            {"embeddings": {"provider": "builtin", "threads": -2}}, "threads", id="bad-threads"
        ),
        pytest.param([1, 2], "fisk", id="not-object"),
    ],
)
def test_bad_field_keeps_default_and_is_named(raw: Any, field: str) -> None:
    parsed = parse_options(raw)
    assert parsed.options == Options()
    assert len(parsed.errors) == 1 and field in parsed.errors[0]


def test_good_fields_survive_bad_ones() -> None:
    parsed = parse_options({"topK": "x", "watch": False})
    assert parsed.options.watch is False and parsed.options.top_k is None
    assert len(parsed.errors) == 1


def test_configuration_layers_over_initialization_options() -> None:
    base = parse_options({"topK": 3, "watch": False}).options
    layered = parse_options({"topK": 9}, base).options
    assert layered.top_k == 9 and layered.watch is False


def test_apply_to_settings(settings: Settings, project: Path) -> None:
    applied = parse_options({"paths": ["docs"], "topK": 2}).options.apply(settings)
    assert applied.roots == (project.resolve() / "docs",)
    assert applied.top_k == 2
    assert applied.embeddings is None
    assert Options().apply(settings) == settings


def test_prebuilt_is_relative_to_the_project_root(settings: Settings, project: Path) -> None:
    applied = parse_options({"prebuilt": " ci/docs.pack.gz "}).options.apply(settings)
    assert applied.prebuilt == project.resolve() / "ci/docs.pack.gz"
    assert parse_options({"prebuilt": "  "}).options.prebuilt is None
    assert parse_options({"prebuilt": 3}).errors == [
        "fisk.prebuilt (expected a string of at most 4,096 characters, got 3)"
    ]


@pytest.mark.parametrize(
    ("embeddings", "message"),
    [
        (
            {"provider": "builtin", "baseUrl": "http://e/v1"},
            "fisk.embeddings.baseUrl (not used with provider builtin)",
        ),
        (
            {"baseUrl": " http://e/v1 "},
            "fisk.embeddings (baseUrl and model are required, or provider builtin)",
        ),
        (
            {"model": "m", "baseUrl": "  "},
            "fisk.embeddings (baseUrl and model are required, or provider builtin)",
        ),
        ({}, "fisk.embeddings (baseUrl and model are required, or provider builtin)"),
        ("x", "fisk.embeddings (expected an object with baseUrl and model, or provider builtin)"),
    ],
)
def test_the_provider_rule_comes_from_the_schema_with_one_message(
    embeddings: object, message: str
) -> None:
    """The if/then/else the schema file carries is the rule the server applies; its one message
    is what the editors show (they send their settings unchecked)."""
    embeddings_schema = json_schema()["properties"]["embeddings"]
    assert {k: embeddings_schema[k] for k in ("if", "then", "else")} == EMBEDDINGS_RULE
    assert parse_options({"embeddings": embeddings}).errors == [message]
