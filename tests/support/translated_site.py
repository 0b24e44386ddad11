"""A small doc site translated into Portuguese (Hugo's ``content/<lang>/`` folders), shared by
the tests of the reader's language in every front end.

The Portuguese exporter page is a little shorter than the English one, so BM25 alone ranks it
first for the bare identifier ``OTEL_EXPORTER_OTLP_ENDPOINT``: a query in no language. English
is the language most candidates are in, so with no reader's language the English copy wins the
near-tie (languages.NEAR_TIE); a Portuguese reader gets the Portuguese copy first.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

IDENTIFIER = "OTEL_EXPORTER_OTLP_ENDPOINT"
ENGLISH = "content/en/docs/exporter.md"
PORTUGUESE = "content/pt/docs/exporter.md"

PAGES = {
    ENGLISH: """\
        # OTLP exporter

        Configure the OTLP exporter endpoint with OTEL_EXPORTER_OTLP_ENDPOINT. The exporter
        sends traces, metrics and logs to the collector over gRPC or HTTP, and retries when
        the collector is unavailable.
        """,
    PORTUGUESE: """\
        # Exportador OTLP

        Configure o endpoint do exporter OTLP com OTEL_EXPORTER_OTLP_ENDPOINT. O exporter
        envia rastros, métricas e logs ao coletor por gRPC ou HTTP.
        """,
    "content/en/docs/other.md": "# Other\n\nNothing about it.\n",
    "content/en/docs/sdk.md": """\
        # SDK configuration

        Every SDK reads its settings from environment variables, such as the service name,
        the propagators, the samplers, the resource attributes and the batch sizes, and
        OTEL_EXPORTER_OTLP_ENDPOINT for the exporter. The exporter page lists them all, with
        their defaults, their types, and how each language reads them at start-up.
        """,
    "content/pt/docs/sdk.md": "# Configuração do SDK\n\nVeja a página do exportador.\n",
}


def write_site(root: Path) -> Path:
    for rel, text in PAGES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def without_locale(env: dict[str, str]) -> dict[str, str]:
    """``env`` with no locale variable set (what decides the reader's language)."""
    return {k: v for k, v in env.items() if k not in ("LC_ALL", "LC_MESSAGES", "LANG")}
