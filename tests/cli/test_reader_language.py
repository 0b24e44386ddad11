"""`fisk-ai knowledge search` asks from the locale it runs in: a query in no language (a bare
identifier) shows the copy in the locale's language first on a translated site."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.translated_site import (
    ENGLISH,
    IDENTIFIER,
    PORTUGUESE,
    without_locale,
    write_site,
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("translated")
    root = write_site(base / "site")
    env = without_locale({k: v for k, v in os.environ.items() if k != "FISK_AI_STORE_DIR"})
    env["FISK_AI_STORE_DIR"] = str(base / "stores")
    subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", "index"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )
    return root, env


def first_path(site: tuple[Path, dict[str, str]], query: str, **locale: str) -> str:
    root, env = site
    out = subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", "--json", "knowledge", "search", query],
        cwd=root,
        env={**env, **locale},
        check=True,
        capture_output=True,
        text=True,
    )
    return str(json.loads(out.stdout)["results"][0]["path"])


@pytest.mark.parametrize(
    ("locale", "want"),
    [
        ({}, ENGLISH),  # no locale: the site's most common language wins the near-tie
        ({"LANG": "C.UTF-8"}, ENGLISH),
        ({"LANG": "pt_BR.UTF-8"}, PORTUGUESE),
        ({"LANG": "en_US.UTF-8"}, ENGLISH),
        ({"LANG": "pt_BR.UTF-8", "LC_ALL": "C"}, ENGLISH),  # LC_ALL overrides LANG
        ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "pt_PT.UTF-8"}, PORTUGUESE),
    ],
)
def test_an_identifier_is_asked_in_the_locales_language(
    site: tuple[Path, dict[str, str]], locale: dict[str, str], want: str
) -> None:
    assert first_path(site, IDENTIFIER, **locale) == want


def test_a_question_in_a_language_keeps_it_whatever_the_locale(
    site: tuple[Path, dict[str, str]],
) -> None:
    question = "how do I configure the OTLP exporter endpoint"
    assert first_path(site, question, LANG="pt_BR.UTF-8") == ENGLISH
