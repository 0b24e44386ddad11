"""Where the API key may go: the policy for ``embeddings.base_url``.

The key travels as a bearer token, so it may only go over https, or over plain http to this
machine (``localhost`` or a loopback IP; names are not resolved). Credentials in the URL would
leak into logs and messages, so userinfo is refused. Messages never echo the URL, which may hold
a secret. Checked when agent.yaml is read (config.py, so the message names the file) and again
when a client is built from plain values.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from ..errors import ConfigError


def validate_base_url(url: str, key: str = "embeddings.base_url") -> str:
    """Check a base URL and return it with surrounding whitespace removed.

    ``key`` names the setting in messages. Raises :class:`ConfigError`.
    """
    candidate = url.strip()
    if not candidate:
        raise ConfigError(f"{key} must not be blank")
    if "\\" in candidate or any(ord(ch) < 33 or ord(ch) == 127 for ch in candidate):
        raise ConfigError(f"{key} must not contain spaces, control characters or backslashes")
    try:
        parts = urlsplit(candidate)
        host = parts.hostname
        _ = parts.port  # raises ValueError for a bad port
    except ValueError:
        raise ConfigError(f"{key} is not a valid URL") from None
    if "@" in parts.netloc:
        raise ConfigError(
            f"{key} must not contain a user name or password; "
            "put the API key in the variable named by embeddings.api_key_env"
        )
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not host:
        raise ConfigError(
            f"{key} must be an http(s) URL with a host, such as https://api.example.com/v1"
        )
    if parts.query or parts.fragment or "?" in candidate or "#" in candidate:
        raise ConfigError(f"{key} must not contain a query string or fragment")
    if scheme == "http" and not is_loopback_host(host):
        raise ConfigError(
            f"{key} uses plain http to {shorten(host, 60)}; use https "
            "(plain http is allowed only to localhost or a loopback address)"
        )
    import httpx  # here, so reading agent.yaml costs no httpx import unless it has embeddings

    try:
        parsed_by_httpx = httpx.URL(candidate)
    except httpx.InvalidURL:
        raise ConfigError(f"{key} is not a valid URL") from None
    if parsed_by_httpx.host.lower() != host.lower():
        # Two parsers disagreeing about the host is how URL-confusion attacks start.
        raise ConfigError(f"{key} is ambiguous; write it as scheme://host[:port]/path")
    return candidate


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback IPs (127.0.0.0/8, ::1), without resolving names."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def shorten(text: str, limit: int) -> str:
    """One printable line of at most ``limit`` characters."""
    line = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
