"""The editor's display language (``initialize``'s ``locale``), else the server's locale, is
the reader's: a bare identifier shows the copy in that language first on a translated site."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.translated_site import ENGLISH, IDENTIFIER, PORTUGUESE, write_site

from .conftest import lsp_session, search, wait_indexed

pytestmark = pytest.mark.asyncio

C = {"LANG": "C.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}
PT = {"LANG": "pt_BR.UTF-8", "LC_ALL": "", "LC_MESSAGES": ""}


@pytest.mark.parametrize(
    ("editor", "locale", "env", "want"),
    [
        ("vscode", "pt-br", C, PORTUGUESE),  # VS Code sends its display language
        ("vscode", "en", PT, ENGLISH),  # ... which outranks the locale it was started in
        ("neovim", None, PT, PORTUGUESE),  # Neovim sends none: the server's locale
        ("neovim", None, C, ENGLISH),  # none at all: the site's most common language
    ],
)
async def test_an_identifier_is_asked_in_the_readers_language(
    tmp_path: Path, editor: str, locale: str | None, env: dict[str, str], want: str
) -> None:
    root = write_site(tmp_path / "site")
    async with lsp_session([root], tmp_path, editor, locale=locale, env=env) as client:
        await wait_indexed(client)
        result = await search(client, IDENTIFIER)
        assert result["results"][0]["location"]["targetUri"].endswith("/site/" + want)
