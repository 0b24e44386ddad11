"""pytest fixture for the fake embeddings server.

Register with ``pytest_plugins = ["tests.support.embed_fixtures"]`` in a conftest, or import
``fake_embed`` into a test module.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_embed_server import FakeEmbedServer


@pytest.fixture
def fake_embed() -> Iterator[FakeEmbedServer]:
    """A started fake server (dim 64, model ``fake-embed``, no key); stopped after the test."""
    server = FakeEmbedServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
