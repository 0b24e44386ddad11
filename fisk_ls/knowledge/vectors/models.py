"""Built-in embedding models: the pinned catalog and the one-time download into the user cache.

A model is a directory holding ``model.onnx`` (a BERT-style encoder whose first output is the
last hidden state) and ``tokenizer.json`` (Hugging Face tokenizers). ``model_path`` in the
configuration names such a directory and nothing is fetched; otherwise the catalog entry's files
are downloaded once, each checked against the size and SHA-256 pinned here, written to a
temporary file in the same directory, flushed and renamed into place (a crash or a bad download
never leaves a half file under the final name).

Default: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0): 384 dimensions, 90 MB, English.
On BEIR SciFact it scores nDCG@10 0.645 (the MTEB figure; reproduced here through our own
pipeline, ../shared/reference/embeddings.md); it is the smallest widely used retrieval model
with published numbers and runs at about 25 chunks/s on 2 cores. For documents in other
languages use multilingual-e5-small (SciFact 0.655 with its prefixes) via ``model_path`` with
``query_prefix: "query: "`` and ``document_prefix: "passage: "``, ``max_tokens: 512``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, EmbeddingsError
from ..regular import NotRegular, open_regular

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
CHUNK_BYTES = 1 << 20

Progress = Callable[[str, int, int], None]
"""(file name, bytes done, bytes total) while a model file downloads."""


@dataclass(frozen=True)
class ModelFile:
    name: str
    url: str
    sha256: str
    size: int


@dataclass(frozen=True)
class ModelSpec:
    name: str
    files: tuple[ModelFile, ...]
    max_tokens: int
    query_prefix: str = ""
    document_prefix: str = ""

    @property
    def weights_sha256(self) -> str:
        return next(f.sha256 for f in self.files if f.name == MODEL_FILE)


_MINILM = "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/"
_MINILM_REV = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"

CATALOG: dict[str, ModelSpec] = {
    "all-MiniLM-L6-v2": ModelSpec(
        name="all-MiniLM-L6-v2",
        files=(
            ModelFile(
                MODEL_FILE,
                f"{_MINILM}{_MINILM_REV}/onnx/model.onnx",
                "6fd5d72fe4589f189f8ebc006442dbb529bb7ce38f8082112682524616046452",
                90_405_214,
            ),
            ModelFile(
                TOKENIZER_FILE,
                f"{_MINILM}{_MINILM_REV}/tokenizer.json",
                "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
                466_247,
            ),
        ),
        max_tokens=256,
    ),
}


def default_model_cache() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("fisk-ls", appauthor=False)) / "models"


def known_model(name: str) -> ModelSpec:
    spec = CATALOG.get(name)
    if spec is None:
        raise ConfigError(
            f"embeddings.model {name!r} is not a built-in model (known: "
            f"{', '.join(sorted(CATALOG))}); give model_path: DIR with model.onnx and "
            "tokenizer.json to use another one"
        )
    return spec


def check_model_dir(path: Path) -> Path:
    """``path`` if it holds a model; a ConfigError naming what is missing otherwise."""
    if not path.is_dir():
        raise ConfigError(f"embeddings.model_path {path} is not a directory")
    for name in (MODEL_FILE, TOKENIZER_FILE):
        try:
            os.close(open_regular(path / name))
        except NotRegular as exc:  # a FIFO or device would hang the model load
            raise ConfigError(f"embeddings.model_path {path / name}: {exc.strerror}") from None
        except OSError:
            pass  # missing or unreadable: said below, or by the load
    missing = [n for n in (MODEL_FILE, TOKENIZER_FILE) if not (path / n).is_file()]
    if missing:
        raise ConfigError(f"embeddings.model_path {path} has no {' or '.join(missing)}")
    return path


def file_sha256(path: Path) -> str:
    """The SHA-256 of a regular file (a FIFO or device is refused with ``NotRegular``, never
    read until it ends)."""
    h = hashlib.sha256()
    with os.fdopen(open_regular(path), "rb") as fh:
        while block := fh.read(CHUNK_BYTES):
            h.update(block)
    return h.hexdigest()


def ensure_model(
    spec: ModelSpec,
    cache: Path | None = None,
    progress: Progress | None = None,
    *,
    timeout: float = 60.0,
) -> Path:
    """The directory of ``spec`` in the cache, downloading what is missing (once)."""
    target = (cache or default_model_cache()) / f"{spec.name}-{spec.weights_sha256[:12]}"
    target.mkdir(parents=True, exist_ok=True)
    for f in spec.files:
        final = target / f.name
        if _verified(final, f):
            continue
        _download(f, final, progress, timeout)
    return target


def _verified(path: Path, f: ModelFile) -> bool:
    """Present with the pinned size and hash (the hash is checked once, then remembered)."""
    try:
        st = path.stat()
    except OSError:
        return False
    if st.st_size != f.size:
        return False
    stamp = path.with_name(path.name + ".sha256")
    seal = f"{f.sha256} {st.st_mtime_ns}"
    with contextlib.suppress(OSError):
        if stamp.read_text().strip() == seal:
            return True
    if file_sha256(path) != f.sha256:
        return False
    _seal(path, f.sha256)
    return True


def _seal(path: Path, sha256: str) -> None:
    """Remember that ``path`` (as it is now) was checked."""
    with contextlib.suppress(OSError):
        seal = f"{sha256} {path.stat().st_mtime_ns}"
        path.with_name(path.name + ".sha256").write_text(seal + "\n")


def _download(f: ModelFile, final: Path, progress: Progress | None, timeout: float) -> None:
    import httpx

    fd, tmp_name = tempfile.mkstemp(prefix=f".{f.name}.", suffix=".part", dir=final.parent)
    tmp = Path(tmp_name)
    try:
        h = hashlib.sha256()
        done = 0
        with os.fdopen(fd, "wb") as out:
            try:
                with httpx.stream("GET", f.url, follow_redirects=True, timeout=timeout) as response:
                    if response.status_code != 200:
                        raise EmbeddingsError(
                            "transient",
                            f"downloading {f.name} from {f.url} failed: HTTP "
                            f"{response.status_code}",
                        )
                    for block in response.iter_bytes(CHUNK_BYTES):
                        done += len(block)
                        if done > f.size:
                            raise _corrupt(f, f"more than the pinned {f.size} bytes")
                        h.update(block)
                        out.write(block)
                        if progress is not None:
                            progress(f.name, done, f.size)
            except httpx.HTTPError as exc:
                raise EmbeddingsError(
                    "transient", f"downloading {f.name} from {f.url} failed: {exc}"
                ) from exc
            out.flush()
            os.fsync(out.fileno())
        if done != f.size:
            raise _corrupt(f, f"{done} bytes, expected {f.size}")
        if h.hexdigest() != f.sha256:
            raise _corrupt(f, f"sha256 {h.hexdigest()}, expected {f.sha256}")
        os.replace(tmp, final)
        _seal(final, f.sha256)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _corrupt(f: ModelFile, detail: str) -> EmbeddingsError:
    return EmbeddingsError(
        "permanent", f"the download of {f.name} from {f.url} failed its integrity check: {detail}"
    )
