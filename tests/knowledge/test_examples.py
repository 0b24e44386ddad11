"""The six examples of issue 14, each on a small fixture with the shapes of the real documents
(a concepts page, a configuration page, an environment-variable reference, a sample
configuration, blog posts that use the same words in passing), never the real corpus files."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from fisk_ls.knowledge import Knowledge, SearchRequest, index_project, resolve_settings

FILLER = (
    "OpenTelemetry is an observability framework and toolkit designed to create and manage "
    "telemetry data such as traces, metrics, and logs. "
)

DOCS = {
    "docs/concepts/signals/traces.md": f"""\
        ---
        title: Traces
        description: The path of a request through your application.
        ---

        Traces give us the big picture of what happens when a request is made to an
        application. {FILLER * 3}

        ## Tracer Provider

        A Tracer Provider is a factory for Tracers. {FILLER * 3}

        ## Trace Exporters

        Trace Exporters send traces to a consumer. This consumer can be standard output for
        debugging, the OpenTelemetry Collector, or any backend of your choice. {FILLER * 2}

        ## Context Propagation

        Context Propagation is the core concept that enables Distributed Tracing. With Context
        Propagation, Spans can be correlated with each other and assembled into a trace.

        ## Spans

        A **span** represents a unit of work or operation. Spans are the building blocks of
        Traces. In OpenTelemetry, they include the following information:

        - Name
        - Parent span ID (empty for root spans)
        - Start and End Timestamps

        ### Span Context

        Span context is an immutable object on every span that contains the trace ID, the span
        ID, trace flags and trace state. {FILLER * 2}

        ### Attributes

        Attributes are key-value pairs that contain metadata that you can use to annotate a
        span. {FILLER * 2}
        """,
    "docs/collector/architecture.md": f"""\
        ---
        title: Architecture
        ---

        The OpenTelemetry Collector is an executable file that can receive telemetry, process
        it, and export it to multiple targets. {FILLER * 2}

        ## Pipelines

        A pipeline defines a path that data follows in the Collector: from reception, to
        processing, to exporting. {FILLER * 2}

        ## Connectors

        A connector joins two pipelines: it is an exporter of one and a receiver of the other.
        {FILLER * 2}
        """,
    "blog/2024/connectors.md": f"""\
        # Connectors in the collector

        ## Why we use connectors

        Our collector uses a connector in the collector to count spans; the connector in the
        collector feeds a metrics pipeline, and every collector runs one connector.
        {FILLER * 2}
        """,
    "blog/2025/logging-and-you.md": f"""\
        ---
        title: OpenTelemetry Logging and You
        ---

        ## How is this different from other signals?

        Once you start talking about events, the line blurs. What is a span other than an event
        with a start and an end? A span event is a log attached to a span, and a span is a
        record with a duration. {FILLER * 3}

        ## Logs bridge

        The logs bridge API connects existing logging libraries to OpenTelemetry. {FILLER * 3}
        """,
    "docs/languages/python/instrumentation.md": f"""\
        # Instrumentation

        ## Traces

        ### Create nested spans

        Create a span inside another span to track nested work; the inner span is a child of
        the outer span. {FILLER * 2}

        ### Span attributes

        Add attributes to a span to describe the operation the span tracks. {FILLER * 2}

        ### Adding links

        A span may be linked to zero or more other spans that are causally related. {FILLER}
        """,
    "docs/collector/configuration.md": f"""\
        ---
        title: Configuration
        description: Learn how to configure the Collector to suit your needs
        ---

        You can configure the OpenTelemetry Collector to suit your observability needs.
        {FILLER * 2}

        ## Receivers

        Receivers collect telemetry from one or more sources. {FILLER * 2}

        ## Processors

        Processors take the data collected by receivers and modify or transform it before
        sending it to the exporters. The following example shows the default batch processor
        and the memory limiter:

        ```yaml
        processors:
          batch:
          memory_limiter:
            check_interval: 5s
            limit_mib: 4000
        ```

        ## Exporters

        Exporters send data to one or more backends or destinations. {FILLER * 2}
        """,
    "blog/2024/collector-at-scale.md": f"""\
        # Running the Collector at scale

        ## Our pipeline

        Our collector runs a receiver, a processor and an exporter per tenant. Each collector
        exporter queue is sized for bursts, and every processor is measured. The collector is
        the busiest service we run: collector, exporter and processor metrics are on every
        dashboard. {FILLER * 2}

        ## Lessons

        Scaling the collector taught us about the exporter retry queue. {FILLER * 2}
        """,
    "blog/2023/batching.md": f"""\
        # Batching in practice

        Batch sizes matter: a batch that is too large delays data, a batch that is too small
        costs requests. We tuned the batch size of every exporter and processor in the
        collector. {FILLER * 2}
        """,
    "docs/languages/sdk-configuration/otlp-exporter.md": f"""\
        ---
        title: OTLP Exporter Configuration
        linkTitle: OTLP Exporter
        ---

        ## Endpoint Configuration

        The following environment variables let you configure an OTLP/gRPC or OTLP/HTTP
        endpoint for your traces, metrics, and logs.

        ### `OTEL_EXPORTER_OTLP_ENDPOINT`

        A base endpoint URL for any signal type, with an optionally-specified port number.
        Helpful for when you're sending more than one signal to the same endpoint and want
        one environment variable to control the endpoint.

        - Default value: `"http://localhost:4317"` for gRPC, `"http://localhost:4318"` for HTTP.

        ### `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`

        Endpoint URL for trace data only. {FILLER}
        """,
    "docs/zero-code/dotnet/configuration.md": f"""\
        # Configuration and settings

        ## Exporters

        ### OTLP

        Set `OTEL_EXPORTER_OTLP_ENDPOINT` and `OTEL_EXPORTER_OTLP_PROTOCOL`; see the exporter
        settings. {FILLER}
        """,
    "docs/platforms/faas/lambda.md": f"""\
        # Lambda Auto-Instrumentation

        ## Configure your SDK exporters

        ```sh
        export OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318
        export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf
        export OTEL_TRACES_EXPORTER=otlp
        ```

        {FILLER * 2}
        """,
    "docs/demo/sample-configurations/tail-sampling.md": """\
        ---
        title: Tail-Based Sampling with service.criticality
        linkTitle: Tail Sampling
        ---

        This example demonstrates how to use the `service.criticality` resource attribute for
        tail-based sampling decisions in the OpenTelemetry Collector. The demo application
        assigns a `service.criticality` value to each service, classifying them by
        operational importance.

        ## Collector Configuration

        To enable tail-based sampling, add the following to your
        `otelcol-config-extras.yml`:

        ```yaml
        processors:
          tail_sampling:
            decision_wait: 10s
            num_traces: 100000
            policies:
        """
    + "".join(
        f"""\
              - name: policy-{i}-sample
                type: string_attribute
                string_attribute:
                  key: service.criticality
                  values: [tier-{i}]
        """
        for i in range(24)
    )
    + """\
        ```

        ## How It Works

        The tail sampling processor waits for every span of a trace before it decides whether
        to keep the trace.
        """,
}


@pytest.fixture(scope="module")
def knowledge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Knowledge]:
    root = tmp_path_factory.mktemp("examples")
    for rel, text in DOCS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    store = tmp_path_factory.mktemp("examples-store")
    settings = resolve_settings(cwd=root, store_base=Path(store), discover=False)
    index_project(settings)
    k = Knowledge(settings)
    yield k
    k.close()


def paths(k: Knowledge, query: str, top: int = 5) -> list[str]:
    return [h.path for h in k.search(SearchRequest(query, top_k=top)).hits]


def test_what_is_a_span_reaches_the_defining_section_first(knowledge: Knowledge) -> None:
    hits = knowledge.search(SearchRequest("what is a span", top_k=5)).hits
    assert hits[0].path == "docs/concepts/signals/traces.md"
    assert "A **span** represents" in hits[0].text
    assert "Spans" in hits[0].section


def test_a_definitional_question_with_context_reaches_the_defined_term(
    knowledge: Knowledge,
) -> None:
    hits = knowledge.search(SearchRequest("what is a connector in the collector", top_k=5)).hits
    assert hits[0].path == "docs/collector/architecture.md"
    assert "A connector joins two pipelines" in hits[0].text


def test_collector_exporter_batch_processor_finds_the_configuration_page(
    knowledge: Knowledge,
) -> None:
    assert "docs/collector/configuration.md" in paths(
        knowledge, "collector exporter batch processor", 3
    )


def test_an_environment_variable_finds_the_page_that_explains_it_first(
    knowledge: Knowledge,
) -> None:
    hits = knowledge.search(SearchRequest("OTEL_EXPORTER_OTLP_ENDPOINT", top_k=5)).hits
    assert hits[0].path == "docs/languages/sdk-configuration/otlp-exporter.md"
    assert "A base endpoint URL" in hits[0].text


def test_tail_sampling_how_to_brings_the_yaml_with_its_introduction(knowledge: Knowledge) -> None:
    hits = knowledge.search(SearchRequest("how do I configure tail sampling", top_k=5)).hits
    top = hits[0]
    assert top.path == "docs/demo/sample-configurations/tail-sampling.md"
    assert "add the following" in top.text
    assert "tail_sampling:" in top.text


def test_merged_sections_are_labelled_and_shown_whole(knowledge: Knowledge) -> None:
    hit = next(
        h
        for h in knowledge.search(SearchRequest("context propagation", top_k=5)).hits
        if h.path == "docs/concepts/signals/traces.md"
    )
    assert hit.section == "Traces > Context Propagation; Spans"
    shown = knowledge.show(hit.citation)
    assert shown.section == "Traces > Context Propagation; Spans"
    assert shown.text.startswith("## Context Propagation")
    assert "## Spans" in shown.text


def test_one_document_index_answers_its_topic(tmp_path: Path) -> None:
    root = tmp_path / "small"
    root.mkdir()
    sections = "\n\n".join(
        f"## Stage {i}\n\n"
        + "Backpressure lets a slow consumer push back on fast producers: the bounded queue "
        "fills and producers block until the consumer drains it. " * 3
        for i in range(4)
    )
    (root / "README.md").write_text(f"# Backpressure\n\n{sections}\n", encoding="utf-8")
    settings = resolve_settings(cwd=root, store_base=tmp_path / "store", discover=False)
    index_project(settings)
    k = Knowledge(settings)
    try:
        hits = k.search(SearchRequest("how does backpressure work")).hits
        assert hits and all(h.path == "README.md" for h in hits)
    finally:
        k.close()
