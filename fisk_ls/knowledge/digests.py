"""The digests a search takes (the store's name, a body's key, a near-duplicate key), without
importing ``hashlib``: hashlib loads OpenSSL's libcrypto when it is imported (about 2 ms of a
whole-process search), for digests CPython also builds in. ``blake2b`` is hashlib's own (it is
always the built-in one); SHA-256 is the built-in module's where the interpreter has it, else
hashlib's. The bytes are the same either way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it: hashlib's, whatever provides it
    from hashlib import blake2b

__all__ = ["blake2b", "sha256_hex"]

_sha256: Callable[[bytes], Any] | None = None


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in hex; for short data (a path): the built-in module is about ten
    times slower than OpenSSL's on a file's bytes."""
    global _sha256
    if _sha256 is None:
        _sha256 = _find_sha256()
    return str(_sha256(data).hexdigest())


def _find_sha256() -> Callable[[bytes], Any]:
    import importlib

    for builtin in ("_sha2", "_sha256"):  # the built-in module's name from 3.12, before it
        try:
            return importlib.import_module(builtin).sha256  # type: ignore[no-any-return]
        except ImportError:
            continue
    import hashlib

    return hashlib.sha256
