"""When question expansion asks the model: the gate (needs_expansion) and expanded() around it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge.expansion import (
    FLAT,
    NOT_NEEDED,
    OFF,
    USED,
    Expander,
    expanded,
    flat,
    needs_expansion,
    reads_as_question,
)

STANDOUT = [1.0, 0.6, 0.5, 0.4, 0.3, 0.2]
"""Plain scores whose best hits stand out (the fifth well under FLAT of the first)."""
TIED = [1.0, 0.99, 0.98, 0.97, 0.96]


def test_questions_and_sentences_read_as_questions() -> None:
    assert reads_as_question("how do I flush the DNS cache")
    assert reads_as_question("why?")
    assert reads_as_question("look up a hostname but ignore what is in the hosts file")


def test_keyword_queries_up_to_six_words_do_not() -> None:
    assert not reads_as_question("OTEL_EXPORTER_OTLP_ENDPOINT default port")
    assert not reads_as_question("metric cardinality limit unique attribute combinations")
    assert not reads_as_question("tail sampling")
    assert reads_as_question("metric cardinality limit unique attribute combinations per view")


def test_flat_results() -> None:
    assert flat(TIED)
    assert not flat(STANDOUT)
    assert flat([])
    assert not flat([1.0, 0.1])  # fewer than five hits, the first standing out
    assert flat([1.0, 0.9, 0.8])  # fewer than five, alike: the words are almost nowhere
    assert not flat([1.0])  # the one section holding the words (an identifier that hits)
    assert flat([1.0, 0.9, 0.8, 0.7, FLAT])


def test_a_keyword_query_whose_hits_stand_out_needs_no_model() -> None:
    assert not needs_expansion("-EncryptionMethod", STANDOUT)
    assert needs_expansion("-EncryptionMethod", TIED)
    assert needs_expansion("-EncryptionMethod", [])
    assert needs_expansion("how do I encrypt a volume", STANDOUT)


@given(st.text(max_size=80), st.lists(st.floats(0.0, 1.0), max_size=12))
def test_the_gate_is_the_question_or_flat(question: str, scores: list[float]) -> None:
    scores.sort(reverse=True)
    assert needs_expansion(question, scores) == (reads_as_question(question) or flat(scores))


class Model:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, prompt: str, timeout: float, question: str) -> str:
        self.calls += 1
        return '{"keywords": "k", "answer": "a", "rephrasing": "r"}'


def _run(question: str, scores: list[float]) -> tuple[list[tuple[str, ...]], str, int]:
    model = Model()
    expander = Expander(model, 5.0)
    searched: list[tuple[str, ...]] = []

    def search(also: tuple[str, ...]) -> list[float]:
        searched.append(also)
        return scores

    try:
        _, expansion = expanded(search, question, expander, lambda r: r)
    finally:
        expander.close()
    return searched, expansion.status, model.calls


def test_expanded_asks_only_when_the_gate_says() -> None:
    assert _run("-EncryptionMethod", STANDOUT) == ([()], NOT_NEEDED, 0)
    assert _run("-EncryptionMethod", TIED) == ([(), ("k", "a", "r")], USED, 1)


def test_expanded_without_an_expander_searches_once() -> None:
    calls: list[tuple[str, ...]] = []

    def search(also: tuple[str, ...]) -> list[float]:
        calls.append(also)
        return TIED

    result, expansion = expanded(search, "q", None, lambda r: r)
    assert calls == [()] and expansion.status == OFF and result is TIED
