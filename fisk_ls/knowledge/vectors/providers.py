"""Which embeddings provider the settings ask for: an OpenAI-compatible server or the built-in
ONNX model. Both are built without I/O; the first embed call connects or loads."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .models import Progress, known_model

if TYPE_CHECKING:
    from ..location import Settings
    from .builtin import BuiltinEmbedder
    from .client import EmbeddingsClient

    Embedder = EmbeddingsClient | BuiltinEmbedder


def make_embedder(
    settings: Settings,
    *,
    progress: Progress | None = None,
    cache: Path | None = None,
    background: bool = True,
) -> Embedder | None:
    """The embedder the settings ask for, or None when embeddings are not configured.

    ``progress`` is told how a built-in model's one-time download goes; ``cache`` replaces the
    user cache directory for it. ``background``: the built-in model indexes at a lower priority
    (the language server, ``watch``); a foreground ``index`` that someone waits for does not."""
    cfg = settings.embeddings
    if cfg is None:
        return None
    if cfg.builtin:
        from .builtin import NICE, BuiltinEmbedder

        model_dir = None
        spec = None
        if cfg.model_path:
            model_dir = Path(os.path.expanduser(cfg.model_path))
            if not model_dir.is_absolute():
                base = settings.config_path.parent if settings.config_path else None
                model_dir = (base or settings.project_root) / model_dir
        else:
            spec = known_model(cfg.model)
        return BuiltinEmbedder(
            cfg.model,
            model_dir=model_dir,
            spec=spec,
            cache=cache,
            threads=cfg.threads,
            max_tokens=cfg.max_tokens,
            query_prefix=cfg.query_prefix,
            document_prefix=cfg.document_prefix,
            progress=progress,
            nice=NICE if background else 0,
        )
    from .client import EmbeddingsClient

    return EmbeddingsClient(
        base_url=cfg.base_url,
        model=cfg.model,
        api_key=os.environ.get(cfg.api_key_env) if cfg.api_key_env else None,
        timeout=cfg.timeout,
        query_timeout=cfg.query_timeout,
        query_prefix=cfg.query_prefix,
        document_prefix=cfg.document_prefix,
    )
