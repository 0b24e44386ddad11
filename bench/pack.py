"""Knowledge packs on a real corpus: the pack's size against the store, adopting it against a
cold index, and the first hybrid search after adopting a pack with vectors.

    python bench/pack.py [--corpus powershell|otel] [--work DIR] > pack.json

Lexical: a cold index of the corpus (the files read, hashed and chunked), its pack (plain, gzip,
xz), then ``index(pack=...)`` into a fresh store over the same files (read and hashed only).
Hybrid: an index whose vectors come from an instant in-process embedder (dense pseudo-random
unit vectors of 384 dimensions, as all-MiniLM-L6-v2's; no model, so the figure is our own
cost), its pack, and its adoption by a
fresh store configured with the same vector space: the run asks the embedder for nothing but the
dimension probe, and the first hybrid search is timed from the moment the adoption returns. What
embedding the chunks would have cost is the built-in model's rate, about 12 chunks per second
per core (bench/embed_speed.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from devset_questions import CORPORA_DIR as CORPORA
from speed import QUERIES, InstantEmbedder, machine, settings_for, timed

from fisk_ls.knowledge import Knowledge, SearchRequest, Settings, index
from fisk_ls.knowledge.config import EmbeddingsConfig
from fisk_ls.knowledge.pack import write_pack

CORPUS = {
    "powershell": CORPORA / "windows-powershell-docs",
    "otel": CORPORA / "opentelemetry-io" / "content" / "en",
}
BUILTIN_CHUNKS_PER_CORE_SECOND = 12.0
DIM = 384


class Dense(InstantEmbedder):
    """Dense pseudo-random unit vectors seeded by each text (a real model's vectors are dense,
    and compress as little: the instant embedder's sparse ones would flatter the packs'
    compressed size); counts the texts it is asked to embed."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.texts = 0

    def _vec(self, text: str) -> list[float]:
        import hashlib

        import numpy as np

        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        v = np.random.default_rng(seed).standard_normal(self.dim)
        return [float(x) for x in v / np.linalg.norm(v)]

    def embed_documents(
        self, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> list[list[float]]:
        self.texts += len(texts)
        return super().embed_documents(texts, titles)


def store_bytes(settings: Settings) -> int:
    return sum(p.stat().st_size for p in settings.store_dir.glob("knowledge.db*"))


def sizes(settings: Settings, work: Path, name: str) -> dict[str, Any]:
    out: dict[str, Any] = {"store_bytes": store_bytes(settings)}
    for suffix in ("", ".gz", ".xz"):
        sec, stats = timed(lambda s=suffix: write_pack(settings, work / f"{name}.pack{s}"))
        key = suffix.lstrip(".") or "plain"
        out[key] = {"bytes": stats.bytes, "write_s": round(sec, 2)}
    return out


def hybrid(settings: Settings) -> Settings:
    config = EmbeddingsConfig(base_url="http://127.0.0.1:9/v1", model="instant-hash")
    return settings.with_overrides(embeddings=config)


def run(corpus: Path, work: Path) -> dict[str, Any]:
    cold = settings_for(corpus, work / "cold")
    cold_s, stats = timed(lambda: index(cold))
    lexical = sizes(cold, work, "lexical")
    adopted = settings_for(corpus, work / "adopt-lexical")
    adopt_s, adopt = timed(lambda: index(adopted, pack=work / "lexical.pack.gz"))
    assert adopt.adopted is not None and adopt.adopted["differ"] == 0, adopt.adopted
    kb = Knowledge(adopted)
    first_s, first = timed(lambda: kb.search(SearchRequest(QUERIES[0])))
    kb.close()
    shutil.rmtree(work / "adopt-lexical", ignore_errors=True)

    packer = hybrid(settings_for(corpus, work / "hybrid"))
    build_s, built = timed(lambda: index(packer, embedder=Dense(DIM)))
    shutil.rmtree(work / "cold", ignore_errors=True)
    vectors = sizes(packer, work, "hybrid")
    shutil.rmtree(work / "hybrid", ignore_errors=True)
    mate = hybrid(settings_for(corpus, work / "adopt-hybrid"))
    counting = Dense(DIM)
    hy_s, hy = timed(lambda: index(mate, embedder=counting, pack=work / "hybrid.pack.gz"))
    kb = Knowledge(mate, embedder=Dense(DIM))
    search_s, found = timed(lambda: kb.search(SearchRequest(QUERIES[0])))
    tier = found.tier
    kb.close()
    shutil.rmtree(work / "adopt-hybrid", ignore_errors=True)
    embed_hours = built.chunks / BUILTIN_CHUNKS_PER_CORE_SECOND / 3600
    return {
        "machine": machine(),
        "corpus": corpus.name,
        "files": stats.files,
        "chunks": stats.chunks,
        "cold_index_s": round(cold_s, 1),
        "lexical_pack": lexical,
        "adopt_lexical_s": round(adopt_s, 1),
        "adopt_vs_cold": round(adopt_s / cold_s, 2),
        "adopted_documents": adopt.adopted["documents"],
        "first_lexical_search_s": round(first_s, 3),
        "first_lexical_hits": len(first.hits),
        "hybrid_build_s": round(build_s, 1),
        "hybrid_pack": vectors,
        "adopt_hybrid_s": round(hy_s, 1),
        "adopted_vectors": (hy.adopted or {}).get("vectors"),
        "texts_embedded_on_adoption": counting.texts,
        "first_hybrid_search_s": round(search_s, 3),
        "first_hybrid_tier": tier,
        "builtin_embedding_one_core_h": round(embed_hours, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", choices=sorted(CORPUS), default="powershell")
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="fisk-bench-pack-"))
    try:
        print(json.dumps(run(CORPUS[args.corpus], work), indent=2))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
