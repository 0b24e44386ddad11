"""Definitional questions reach a glossary entry (issue 14): a glossary's short entries share
one chunk four to a label ("Terms > OTLP; Propagators; Proto; Receiver"), whose long label
dilutes its BM25, while many pages use the term in passing and sections headed by a word with
the same Porter stem ("Propagation") compete. The fixture has those shapes, never the real files."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from fisk_ls.knowledge import Knowledge, SearchRequest, index_project, resolve_settings
from fisk_ls.knowledge.fts import heading_key, singular
from fisk_ls.knowledge.lexical import started_headings
from tests.support.question import question_text

GLOSSARY = """\
    ---
    title: Glossary
    description: Definitions and conventions for telemetry terms.
    ---

    This glossary defines terms and concepts that are new to the project.

    ## Terms

    ### Observability backend

    The component of an observability platform that receives, processes, stores and queries
    telemetry data.

    ### OTLP

    Short for OpenTelemetry Protocol.

    ### Propagators

    Used to serialize and deserialize specific parts of telemetry data such as span context
    and baggage in spans.

    ### Proto

    Language independent interface types.

    ### Receiver

    The term used by the Collector to define how telemetry data is received.
    """

PROPAGATION = """\
    ---
    title: Propagation
    ---

    ## Propagation

    Propagation is the mechanism that moves data between services and processes. A propagator
    reads and writes context to and from messages; the default propagator uses the W3C
    headers, and a composite propagator can combine several. Configure the propagator before
    you create any tracer.
    """

POST = """\
    ---
    title: Release notes {n}
    ---

    ## Changes in release {n}

    The propagator for B3 was updated: the propagator now handles single headers, and the
    propagator tests cover more formats. Stand up an OTLP receiver and an OTLP exporter to
    try it; OTLP over HTTP is the default and OTLP over gRPC works too. We stand by the
    propagator change.
    """

ROW = "| `OTEL_EXPORTER_OTLP_{k}_{n}` | OTLP {k} setting {n} for the OTLP exporter | `none` |\n"
EXPORTERS = (
    "---\ntitle: Configuration and settings\n---\n\n## Exporters\n\n### OTLP\n\n"
    "To customize the OTLP exporter use these environment variables.\n\n"
    "| Variable | Description | Default |\n|---|---|---|\n"
    + "".join(ROW.format(k=k, n=n) for k in ("TRACES", "METRICS", "LOGS") for n in range(30))
    + "\n### Zipkin\n\nThe Zipkin exporter sends spans to a Zipkin backend.\n"
)
"""One long "OTLP" section: an environment-variable table cut into many chunks, each labelled
"Exporters > OTLP" (the shape of the .NET zero-code configuration page)."""

LANGUAGES = ("go", "java", "js", "python", "ruby", "php")
POSTS = 70
"""More posts than the lexical candidates the heading boost used to see (FANOUT = 50)."""


@pytest.fixture(scope="module")
def knowledge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Knowledge]:
    root = tmp_path_factory.mktemp("glossary-corpus")
    files = {"docs/concepts/glossary.md": GLOSSARY}
    files |= {f"docs/languages/{lang}/propagation.md": PROPAGATION for lang in LANGUAGES}
    files["docs/zero-code/dotnet/configuration.md"] = EXPORTERS
    files |= {f"blog/release-{n}.md": POST.replace("{n}", str(n)) for n in range(POSTS)}
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    store = tmp_path_factory.mktemp("glossary-store")
    settings = resolve_settings(cwd=root, store_base=Path(store), discover=False)
    index_project(settings)
    k = Knowledge(settings)
    yield k
    k.close()


def test_the_glossary_entries_share_one_chunk(knowledge: Knowledge) -> None:
    hits = knowledge.search(SearchRequest("serialize deserialize", top_k=5)).hits
    glossary = [h for h in hits if h.path == "docs/concepts/glossary.md"]
    assert glossary and glossary[0].section.endswith("OTLP; Propagators")


def test_what_is_a_propagator_reaches_the_glossary_entry(knowledge: Knowledge) -> None:
    hits = knowledge.search(SearchRequest("what is a propagator", top_k=5)).hits
    assert hits[0].path == "docs/concepts/glossary.md"
    assert "Used to serialize and deserialize" in hits[0].text


def test_what_does_otlp_stand_for_reaches_the_glossary_entry(knowledge: Knowledge) -> None:
    # The OTLP exporter section is headed "OTLP" too and may come first; its continuations
    # may not come before the definition.
    hits = knowledge.search(SearchRequest("what does OTLP stand for", top_k=5)).hits
    glossary = [h for h in hits[:2] if h.path == "docs/concepts/glossary.md"]
    assert glossary and "Short for OpenTelemetry Protocol" in glossary[0].text


def test_a_long_section_counts_its_heading_once(knowledge: Knowledge) -> None:
    hits = knowledge.search(SearchRequest("what does OTLP stand for", top_k=10)).hits
    table = [h for h in hits if h.path == "docs/zero-code/dotnet/configuration.md"]
    assert len(table) > 1  # the table is cut into several chunks, all labelled "... > OTLP"
    assert all(h.section.endswith("Exporters > OTLP") for h in table)
    assert hits.index(table[1]) > hits.index(
        next(h for h in hits if h.path == "docs/concepts/glossary.md")
    )


def test_started_headings_skip_a_continued_section() -> None:
    assert started_headings("Exporters > OTLP", "Exporters") == ["OTLP"]
    assert started_headings("Exporters > OTLP", "Exporters > OTLP") == []
    assert started_headings("Exporters > OTLP", "Exporters > Console") == ["OTLP"]
    assert started_headings("Terms > Propagators; Proto", "Terms > OTLP; Propagators") == ["Proto"]
    assert started_headings("Terms > OTLP; Propagators", "Terms > Observability backend") == [
        "OTLP",
        "Propagators",
    ]


def test_a_word_sharing_only_a_stem_is_not_the_defined_term(knowledge: Knowledge) -> None:
    # "Propagation" and "propagator" are both "propag" to the Porter stemmer.
    hits = knowledge.search(SearchRequest("what is a propagator", top_k=10)).hits
    first_propagation = next(i for i, h in enumerate(hits) if h.path.endswith("propagation.md"))
    assert first_propagation > 0


def test_singular_folds_plurals_only() -> None:
    assert singular("propagators") == "propagator"
    assert singular("policies") == "policy"
    assert singular("batches") == "batch"
    assert singular("processes") == "process"
    for word in ("status", "analysis", "class", "otlp", "propagation", "bus"):
        assert singular(word) == word


def test_heading_key_matches_headings_and_questions_alike() -> None:
    assert heading_key("Propagators") == heading_key("propagator") == ("propagator",)
    assert heading_key("What is Observability?") == heading_key("observability")
    assert heading_key("Get-AppxPackage") == heading_key("get appxpackage")
    assert heading_key("Propagation") != heading_key("propagator")
    assert heading_key("Distributed traces") == ("distributed", "trace")


def test_question_text_drops_the_frame_of_a_definition() -> None:
    assert question_text("what does OTLP stand for") == "OTLP"
    assert question_text("What does OTLP mean?") == "OTLP"
    assert question_text("define resource detectors") == "resource detectors"
    # A "what is X in Y" question keeps its context; other questions are untouched.
    assert question_text("what is a connector in the collector") == (
        "what is a connector in the collector"
    )
    assert question_text("how do I stand up a collector") == "how do I stand up a collector"


def test_a_long_text_is_no_definitional_question() -> None:
    from tests.support.question import heading_terms

    pasted = (
        "Definition of a large scale cyber attack is extremely vague. Armed acts of aggression "
        "are a good method of judging if an action is an act of war because they result in "
        "actual destruction."
    )
    assert question_text(pasted) == pasted
    asked = "Who is left behind? In promoting a free labour market, we need to ask who migrates."
    assert heading_terms(asked) == []


def test_a_documents_first_chunk_begins_every_section_its_label_names() -> None:
    # No chunk comes before it, so the title's section (and every heading on its breadcrumb)
    # begins there, even on a page with no text before its first subheading.
    assert started_headings("Exporters > OTLP", None) == ["Exporters", "OTLP"]
    assert started_headings("Get-Widget > SYNOPSIS; SYNTAX", None) == [
        "Get-Widget",
        "SYNOPSIS",
        "SYNTAX",
    ]
    assert started_headings("Title", None) == ["Title"]
    assert started_headings("", None) == []


CMDLET = """\
    ---
    external help file: Widgets.dll-Help.xml
    Module Name: Widgets
    title: {name}
    ---

    # {name}

    ## SYNOPSIS
    {synopsis}

    ## SYNTAX

    ```
    {name} [-Name] <String> [-Size <UInt32>] [-WhatIf] [-Confirm] [<CommonParameters>]
    ```

    ## DESCRIPTION

    The `{name}` cmdlet {verb} a widget on the local computer. A widget is a named unit of
    work that the widget service schedules; every widget has a size and a state.

    ## PARAMETERS

    ### -Name

    Specifies the name of the widget. The name must be unique on the computer.

    ### -Size

    Specifies the size of the widget, in units. The widget service rounds the size up.
    """

VERBS = {"New": "creates", "Get": "gets", "Remove": "removes", "Set": "changes", "Test": "checks"}
"""One cmdlet page per verb, each titled by its cmdlet and with no text before its first
subheading (the PowerShell reference's shape), and a module page listing them all."""


@pytest.fixture(scope="module")
def cmdlets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Knowledge]:
    root = tmp_path_factory.mktemp("cmdlet-corpus")
    module = ["---\ntitle: Widgets Module\n---\n\n# Widgets Module\n\n## Widgets Cmdlets\n"]
    for verb, does in VERBS.items():
        name = f"{verb}-Widget"
        synopsis = f"{does.capitalize()} a widget."
        page = textwrap.dedent(CMDLET).format(name=name, synopsis=synopsis, verb=does)
        (root / f"{name}.md").write_text(page, encoding="utf-8")
        module.append(f"\n### [{name}]({name}.md)\n\n{synopsis}\n")
    (root / "Widgets.md").write_text("".join(module), encoding="utf-8")
    store = tmp_path_factory.mktemp("cmdlet-store")
    settings = resolve_settings(cwd=root, store_base=Path(store), discover=False)
    index_project(settings)
    k = Knowledge(settings)
    yield k
    k.close()


@pytest.mark.parametrize("query", ["what does New-Widget do", "New-Widget"])
def test_a_page_titled_by_the_term_comes_before_a_list_that_names_it(
    cmdlets: Knowledge, query: str
) -> None:
    # The module page's "New-Widget" entry is a heading that is the term; so is the cmdlet
    # page's title, whose section its first chunk begins (SYNOPSIS; SYNTAX).
    hits = cmdlets.search(SearchRequest(query, top_k=5)).hits
    assert hits[0].path == "New-Widget.md"
    assert "Creates a widget." in hits[0].text
