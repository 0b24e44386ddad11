"""Child process for the kill -9 test: index with the real built-in model, and hang inside the
second embedding round (after the first round was committed), announcing it with a file.

    python -m tests.support.embed_then_hang PROJECT STORE_BASE MODEL_DIR SIGNAL_FILE
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from fisk_ls.knowledge import index_project, resolve_settings
from fisk_ls.knowledge.config import EmbeddingsConfig
from fisk_ls.knowledge.vectors.builtin import PROBE_TEXT, BuiltinEmbedder


class HangOnSecondRound(BuiltinEmbedder):
    signal: Path
    rounds = 0

    def embed_documents(
        self, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> list[list[float]]:
        if list(texts) == [PROBE_TEXT]:
            return super().embed_documents(texts, titles)  # the dimension probe
        self.rounds += 1
        if self.rounds == 2:
            self.signal.write_text("embedding round 2\n")
            threading.Event().wait()  # until kill -9
        return super().embed_documents(texts, titles)


def main(argv: list[str]) -> None:
    project, store_base, model, signal = (Path(a) for a in argv)
    cfg = EmbeddingsConfig("", "all-MiniLM-L6-v2", provider="builtin", model_path=str(model))
    settings = resolve_settings(cwd=project, store_base=store_base).with_overrides(embeddings=cfg)
    emb = HangOnSecondRound("all-MiniLM-L6-v2", model_dir=model)
    emb.signal = signal
    index_project(settings, embedder=emb)


if __name__ == "__main__":
    main(sys.argv[1:])
