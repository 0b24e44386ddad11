"""A paraphrased question that its own words cannot answer, and the agent string that can: the
fixture every front end's ``also`` test uses."""

from __future__ import annotations

import textwrap
from pathlib import Path

DOCS = {
    "docs/naming.md": """\
        # Service naming

        ## OTEL_SERVICE_NAME

        Sets the value of the service.name resource attribute reported by every signal.
        """,
    "docs/display.md": """\
        # Display

        The tracing backend shows spans grouped by the app they come from, so you can change
        views as you go.
        """,
    "docs/other.md": """\
        # Sampling

        Head sampling decides at the root span whether a trace is kept.
        """,
}
QUESTION = "how do I change the name my app shows up as in the tracing backend"
"""Its words find docs/display.md first; the answer is docs/naming.md."""
KEYWORDS = "OTEL_SERVICE_NAME service.name resource attribute"
ANSWER = "Set the OTEL_SERVICE_NAME environment variable; it becomes service.name."
REPHRASE = "how do I set the service name"
ALSO = [KEYWORDS, ANSWER, REPHRASE]


def write_site(root: Path) -> Path:
    for rel, text in DOCS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root
