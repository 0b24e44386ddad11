"""MCP over HTTP at its edges, as clients other than the SDK's meet them (the app ``--http``
serves, in-process): the 401 and its resource metadata name the URL the client used, and
every method but POST and DELETE on /mcp gets one 405 with one ``Allow``."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("mcp", reason="the MCP suite needs the optional extra fisk-ls[mcp]")

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fisk_ls.agent.mcp import MCP_PATH, BearerAuth, build_server, http_app

from .conftest import HEADERS, initialize

pytestmark = pytest.mark.anyio
HOST = "127.0.0.1"
TOKEN = "tok-" + "4b1d7e0c9a" * 3
INITIALIZE = initialize()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def serving(token: str | None) -> AsyncIterator[httpx.AsyncClient]:
    """The app on a socket at 127.0.0.1:8080, as far as the app can tell (the ASGI server)."""
    app: Any = http_app(build_server(None), HOST, None)
    served = BearerAuth(app, token) if token is not None else app
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=served)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{HOST}:8080") as c:
            yield c


def _metadata_url(response: httpx.Response) -> str:
    found = re.fullmatch(
        r'Bearer realm="fisk-ai mcp", resource_metadata="([^"\s,]+)"(?:, error="invalid_token")?',
        response.headers["www-authenticate"],
    )
    assert found is not None, response.headers["www-authenticate"]
    return found.group(1)


@pytest.mark.parametrize("host", ["localhost:8080", "build-box:8080", "[::1]:8080", "docs"])
async def test_the_401_names_the_url_the_client_used(host: str) -> None:
    """A client of http://localhost:8080/mcp reaches the socket on 127.0.0.1; the MCP Inspector
    stopped with "Protected resource http://127.0.0.1:8080/mcp does not match expected
    http://localhost:8080/mcp" instead of saying that the token was missing."""
    async with serving(TOKEN) as client:
        for auth in ({}, {"Authorization": "Bearer wrong"}):
            denied = await client.post(
                MCP_PATH, json=INITIALIZE, headers={**HEADERS, **auth, "Host": host}
            )
            assert denied.status_code == 401
            url = _metadata_url(denied)
            assert url == f"http://{host}/.well-known/oauth-protected-resource{MCP_PATH}"
            metadata = await client.get(urlsplit(url).path, headers={"Host": host})
            assert metadata.status_code == 200
            assert metadata.json()["resource"] == f"http://{host}{MCP_PATH}"


HOST_CHARS = st.characters(min_codepoint=0x21, max_codepoint=0x7E)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(host=st.text(HOST_CHARS, min_size=1, max_size=40))
async def test_any_host_header_leaves_a_well_formed_challenge(host: str) -> None:
    """Whatever Host a client sends, the challenge stays one quoted URL on this path and the
    metadata's resource is that URL's origin plus /mcp: either the Host as given or the socket's
    address."""
    async with serving(TOKEN) as client:
        denied = await client.post(MCP_PATH, json=INITIALIZE, headers={**HEADERS, "Host": host})
        assert denied.status_code == 401
        url = _metadata_url(denied)
        origin = url.removesuffix(f"/.well-known/oauth-protected-resource{MCP_PATH}")
        assert origin in (f"http://{host}", f"http://{HOST}:8080")
        assert urlsplit(url).path == f"/.well-known/oauth-protected-resource{MCP_PATH}"
        metadata = await client.get(urlsplit(url).path, headers={"Host": host})
        assert metadata.json()["resource"] == origin + MCP_PATH


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "OPTIONS", "HEAD"])
@pytest.mark.parametrize("token", [None, TOKEN], ids=["open", "token"])
async def test_other_methods_get_one_405(method: str, token: str | None) -> None:
    """405 with ``Allow: POST, DELETE`` whatever the method (the SDK's answer to PUT listed GET,
    which is 405 too) and no session id (the SDK's carried one it had already dropped)."""
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    async with serving(token) as client:
        answer = await client.request(method, MCP_PATH, headers={**HEADERS, **auth})
        assert answer.status_code == 405
        assert answer.headers["allow"] == "POST, DELETE"
        assert "mcp-session-id" not in answer.headers
        if method != "HEAD":
            assert "POST requests to /mcp" in answer.json()["error"]
        opened = await client.post(MCP_PATH, json=INITIALIZE, headers={**HEADERS, **auth})
        assert opened.status_code == 200 and opened.headers["mcp-session-id"]


@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-authorization-server/mcp",
        "/.well-known/openid-configuration",
    ],
)
async def test_no_authorization_server_is_a_404_not_a_401(path: str) -> None:
    """A client that found the resource metadata then looks for its authorization server's:
    there is none (the token is set by hand), which is a 404, not a demand for the token."""
    async with serving(TOKEN) as client:
        got = await client.get(path)
        assert got.status_code == 404, got.text
        assert "www-authenticate" not in got.headers
        assert "no authorization server" in got.json()["error"]
        # The resource metadata and the endpoint itself are unchanged.
        assert (await client.get("/.well-known/oauth-protected-resource/mcp")).status_code == 200
        assert (await client.post(MCP_PATH, json=INITIALIZE, headers=HEADERS)).status_code == 401
