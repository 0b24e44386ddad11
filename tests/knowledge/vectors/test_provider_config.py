"""embeddings: provider builtin / openai in agent.yaml, and which embedder each builds."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from fisk_ls.knowledge import Settings
from fisk_ls.knowledge.config import EmbeddingsConfig, parse_embeddings
from fisk_ls.knowledge.errors import ConfigError
from fisk_ls.knowledge.vectors import builtin as builtin_module
from fisk_ls.knowledge.vectors.builtin import (
    NICE,
    BuiltinEmbedder,
    default_threads,
    lower_thread_priority,
)
from fisk_ls.knowledge.vectors.client import EmbeddingsClient
from fisk_ls.knowledge.vectors.models import CATALOG
from fisk_ls.knowledge.vectors.providers import make_embedder


def test_builtin_needs_no_url_and_defaults_its_model() -> None:
    cfg = parse_embeddings({"provider": "builtin"})
    assert cfg.builtin and cfg.model == "all-MiniLM-L6-v2" and cfg.base_url == ""
    assert cfg.threads == 0 and cfg.max_tokens == 0 and cfg.model_path == ""
    cfg = parse_embeddings({"provider": "builtin", "model": "e5", "model_path": "/m", "threads": 2})
    assert (cfg.model, cfg.model_path, cfg.threads) == ("e5", "/m", 2)


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"provider": "builtin", "base_url": "http://x/v1"}, "not used with provider builtin"),
        ({"provider": "onnx"}, "expected one of openai, builtin"),
        ({"model": "m"}, "base_url and model are required, or provider builtin"),
        ({"base_url": "http://x/v1", "model": "m", "model_path": "/m"}, "only used with"),
        ({"provider": "builtin", "threads": -1}, "from 0 to 256"),
        ({"provider": "builtin", "threads": 10_000}, "from 0 to 256, got 10000"),
        ({"provider": "builtin", "threads": "two"}, "expected an integer"),
    ],
)
def test_bad_provider_blocks_are_named(block: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_embeddings(block)


def test_openai_stays_the_default() -> None:
    cfg = parse_embeddings({"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    assert cfg.provider == "openai" and not cfg.builtin


def test_make_embedder_picks_the_provider(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(builtin_module, "packaged_files", lambda spec: None)  # the download
    openai = settings.with_overrides(
        embeddings=EmbeddingsConfig(base_url="http://127.0.0.1:9/v1", model="m")
    )
    client = make_embedder(openai)
    assert isinstance(client, EmbeddingsClient)
    client.close()
    builtin = settings.with_overrides(
        embeddings=EmbeddingsConfig("", "all-MiniLM-L6-v2", provider="builtin")
    )
    cache = tmp_path / "models"
    emb = make_embedder(builtin, cache=cache)
    assert isinstance(emb, BuiltinEmbedder)
    sha = CATALOG["all-MiniLM-L6-v2"].weights_sha256
    assert emb.model == f"builtin:all-MiniLM-L6-v2@{sha[:12]}" and emb.max_tokens == 256
    assert emb.threads == default_threads() >= 1 and emb.nice == NICE > 0  # background
    foreground = make_embedder(builtin, cache=cache, background=False)
    assert isinstance(foreground, BuiltinEmbedder) and foreground.nice == 0
    foreground.close()
    assert not cache.exists()  # nothing is fetched before the first embed
    emb.close()
    other = EmbeddingsConfig("", "all-MiniLM-L6-v2", provider="builtin", max_tokens=128)
    emb = make_embedder(settings.with_overrides(embeddings=other), cache=cache)
    assert emb is not None and emb.model.endswith("/128")  # truncation is part of the identity
    emb.close()


def test_model_path_is_checked_and_hashed(settings: Settings, tmp_path: Path) -> None:
    cfg = EmbeddingsConfig("", "mine", provider="builtin", model_path=str(tmp_path / "nope"))
    with pytest.raises(ConfigError, match="not a directory"):
        make_embedder(settings.with_overrides(embeddings=cfg))
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.onnx").write_bytes(b"weights")
    (model / "tokenizer.json").write_text("{}")
    cfg = EmbeddingsConfig("", "mine", provider="builtin", model_path=str(model))
    emb = make_embedder(settings.with_overrides(embeddings=cfg))
    assert emb is not None and emb.model.startswith("builtin:mine@")
    with pytest.raises(ConfigError, match="not a built-in model"):
        make_embedder(
            settings.with_overrides(embeddings=EmbeddingsConfig("", "mine", provider="builtin"))
        )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux")
def test_lowering_priority_touches_only_the_calling_thread() -> None:
    seen: dict[str, int] = {}

    def worker() -> None:
        before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        assert lower_thread_priority(5)
        seen["worker"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) - before

    main_before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen["worker"] in (5, 19 - main_before) and seen["worker"] > 0
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == main_before
    assert not lower_thread_priority(0)
