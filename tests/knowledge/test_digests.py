"""The digests a search takes without hashlib are hashlib's, byte for byte: the store's name of
a project (a changed digest would lose its index) and the keys stored in the index."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge.collapse import normalised, text_key
from fisk_ls.knowledge.digests import blake2b, sha256_hex
from fisk_ls.knowledge.location import zero_config_store
from fisk_ls.knowledge.schema import body_key


@given(st.binary(max_size=4096))
def test_sha256_hex_is_hashlibs(data: bytes) -> None:
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


@given(st.binary(max_size=4096), st.integers(min_value=1, max_value=64))
def test_blake2b_is_hashlibs(data: bytes, size: int) -> None:
    ours = blake2b(data, digest_size=size).digest()
    assert ours == hashlib.blake2b(data, digest_size=size).digest()


def test_the_store_of_a_project_keeps_its_name(tmp_path: Path) -> None:
    root = Path("/home/someone/docs")
    expected = hashlib.sha256(os.fsencode(root)).hexdigest()[:12]
    assert zero_config_store(root, tmp_path) == tmp_path / f"docs-{expected}"
    assert expected == "adde5e2ab2bb"


def test_stored_keys_are_hashlibs() -> None:
    body = "Remove-Item -Path HKCU:\\Software\\Example"
    assert body_key(body) == hashlib.blake2b(body.encode(), digest_size=16).digest()
    near = hashlib.blake2b(normalised("Remove a key", body).encode(), digest_size=8)
    assert text_key("Remove a key", body) == "n:" + near.hexdigest()
