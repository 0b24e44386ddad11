"""Markup removed from what the vector arm embeds (issue 14), measured, not in the product.

MiniLM reads 256 tokens of each chunk. Markdown links, URLs, HTML tags, Hugo shortcodes and
table rules spend them on no words: "[Extensions API](https://docs.aws.amazon.com/lambda/...)"
is three words and twenty-odd tokens. Here every chunk is embedded again from its breadcrumb
and body with that markup removed (the words of links and emphasis kept), and the hybrid dev set
runs with an exact search over those vectors.

    python bench/experiments/clean_vectors.py embed STORE.db MODEL_DIR OUT.npz
    VECTORS=OUT.npz python bench/experiments/clean_vectors.py devset [devset.py args] > out.json
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"<!--.*?-->", re.S), " "),
    (re.compile(r"\{\{[<%].*?[%>]\}\}", re.S), " "),  # Hugo shortcodes
    (re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),  # links and images: their words
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1"),  # reference links
    (re.compile(r"^\s*\[[^\]]+\]:\s*\S+.*$", re.M), " "),  # link definitions
    (re.compile(r"https?://\S+"), " "),
    (re.compile(r"</?[A-Za-z][^>]*>"), " "),  # HTML tags
    (re.compile(r"^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$", re.M), " "),  # table rules
    (re.compile(r"^\s*(?:```|~~~).*$", re.M), " "),  # fence lines
    (re.compile(r"(\*\*|__|`)"), ""),
    (re.compile(r"\s*\|\s*"), " ; "),
    (re.compile(r"[ \t]+"), " "),
    (re.compile(r"\n\s*\n+"), "\n"),
]


def clean(text: str) -> str:
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return text.strip() or " "


def embed(db: str, model_dir: str, out: str) -> None:
    from window_vectors import chunk_rows

    from fisk_ls.knowledge.display import display_text
    from fisk_ls.knowledge.vectors.builtin import BuiltinEmbedder

    rows = chunk_rows(db)
    texts = [clean(display_text(str(s), str(b))) for _, s, b in rows]
    before = sum(len(display_text(str(s), str(b))) for _, s, b in rows)
    print(f"{len(rows)} chunks, {before} -> {sum(map(len, texts))} chars", file=sys.stderr)
    emb = BuiltinEmbedder("all-MiniLM-L6-v2", model_dir=Path(model_dir), threads=2, nice=0)
    vecs: list[list[float]] = []
    t0 = time.monotonic()
    for i in range(0, len(texts), 256):
        vecs.extend(emb.embed_documents(texts[i : i + 256]))
        rate = len(vecs) / (time.monotonic() - t0)
        print(f"{len(vecs)}/{len(texts)} {rate:.1f}/s", file=sys.stderr, flush=True)
    emb.close()
    ids = np.array([int(r[0]) for r in rows], dtype=np.int64)
    np.savez(out, ids=ids, vecs=np.array(vecs, dtype=np.float32))


def devset_main() -> int:
    import devset

    from fisk_ls.knowledge import search as S

    data = np.load(os.environ["VECTORS"])
    ids, matrix = data["ids"], data["vecs"]

    def vector_ids(
        snap: Any, vector: Any, limit: int = S.FANOUT, coarse: Any = None, within: Any = None
    ) -> Any:
        assert within is None  # the dev sets search no scope
        cos = matrix @ np.asarray(vector, dtype=np.float32)
        top = np.argsort(-cos)[:limit]
        return sorted(((int(ids[j]), float(cos[j])) for j in top), key=lambda r: (-r[1], r[0]))

    S.vector_ids = vector_ids  # type: ignore[assignment]
    return devset.main(sys.argv[2:])


if __name__ == "__main__":
    if sys.argv[1] == "embed":
        embed(*sys.argv[2:5])
    else:
        raise SystemExit(devset_main())
