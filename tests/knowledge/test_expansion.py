"""Question expansion: the reply parser, the expander (cache, deadline, failures), the gate and
the search around it, and the chat-server client against a fake OpenAI-compatible server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge import Project, SearchRequest, resolve_settings
from fisk_ls.knowledge.chat import ChatModel
from fisk_ls.knowledge.config import ExpansionConfig, parse_expansion
from fisk_ls.knowledge.errors import ConfigError
from fisk_ls.knowledge.expansion import (
    CACHED,
    FAILED,
    NOT_NEEDED,
    OFF,
    USED,
    Expander,
    ExpansionFailed,
    expanded,
    parse_reply,
    prompt,
    reads_as_question,
)
from tests.support.fake_chat_server import FakeChatServer, question_of
from tests.support.waiting import HANG_GUARD

QUESTION = "what happens when my calls keep failing over and over"
STRINGS = [
    "retry exponential backoff attempts",
    "The client retries failed requests with exponential backoff.",
    "how are failed requests retried",
]


# -- the reply ------------------------------------------------------------------------------------


def test_reply_as_a_json_object() -> None:
    reply = '{"keywords": "a b", "answer": "The answer.", "rephrasing": "c d?"}'
    assert parse_reply(reply, "q") == ("a b", "The answer.", "c d?")


def test_reply_inside_prose_a_fence_or_after_thinking() -> None:
    obj = '{"keywords": "retry backoff", "answer": "It retries.", "rephrase": "how retries"}'
    assert parse_reply(f"Sure:\n```json\n{obj}\n```\nBye", "q")[0] == "retry backoff"
    thinking = f"<think>they want {{json}} with {{keys}}</think>\n{obj}"
    assert parse_reply(thinking, "q") == ("retry backoff", "It retries.", "how retries")


def test_reply_as_labelled_lines() -> None:
    reply = "1. **Keywords**: retry backoff\n2. Answer: It retries.\n- rephrasing: how retries"
    assert parse_reply(reply, "q") == ("retry backoff", "It retries.", "how retries")


def test_reply_strings_are_checked_like_also_strings() -> None:
    reply = (
        '{"keywords": "  the   QUESTION ", "answer": "x\\n\\n y", "rephrasing": "X Y", '
        '"extra": "ignored"}'
    )
    # the question itself and repeats (case-insensitive) are dropped, whitespace collapsed
    assert parse_reply(reply, "the question") == ("x y",)
    assert parse_reply('{"keywords": 3, "answer": null, "rephrasing": ["a"]}', "q") == ()
    assert parse_reply("no strings here", "q") == ()
    long = parse_reply('{"keywords": "' + "a" * 5000 + '"}', "q")
    assert len(long[0]) == 2000


@given(st.text(max_size=3000), st.text(max_size=200))
def test_any_reply_parses_into_at_most_three_clean_strings(reply: str, question: str) -> None:
    strings = parse_reply(reply, question)
    assert len(strings) <= 3
    for s in strings:
        assert s and s == " ".join(s.split()) and len(s) <= 2000
    assert len({s.casefold() for s in strings}) == len(strings)


def test_the_prompt_holds_the_question_verbatim() -> None:
    question = 'how do I set "x" {y}\nin C#?'
    text = prompt(question)
    assert question in text
    assert question_of(text) == question.strip()


# -- the expander ---------------------------------------------------------------------------------


class Model:
    """A model that answers ``STRINGS``; ``gate`` (when given) holds every answer until set."""

    def __init__(self, reply: str | None = None, gate: threading.Event | None = None) -> None:
        self.reply = reply
        self.gate = gate
        self.calls: list[str] = []
        self.entered = threading.Event()

    def __call__(self, prompt: str, timeout: float, question: str) -> str:
        self.calls.append(question)
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(HANG_GUARD)
        if self.reply is None:
            raise ExpansionFailed("the model is down")
        return self.reply


def obj(strings: list[str]) -> str:
    import json

    return json.dumps(dict(zip(("keywords", "answer", "rephrasing"), strings, strict=False)))


def test_a_repeated_question_is_answered_from_the_cache() -> None:
    model = Model(obj(STRINGS))
    expander = Expander(model, timeout=HANG_GUARD)
    first = expander.expand(QUESTION)
    again = expander.expand("  WHAT happens when my calls keep failing   over and over ")
    assert (first.status, first.strings) == (USED, tuple(STRINGS))
    assert (again.status, again.strings) == (CACHED, tuple(STRINGS))
    assert model.calls == [QUESTION]
    expander.close()


def test_the_same_question_in_flight_makes_one_call() -> None:
    gate = threading.Event()
    model = Model(obj(STRINGS), gate)
    expander = Expander(model, timeout=HANG_GUARD)
    results: list[str] = []
    threads = [
        threading.Thread(target=lambda: results.append(expander.expand(QUESTION).status))
        for _ in range(2)
    ]
    threads[0].start()
    assert model.entered.wait(HANG_GUARD)
    threads[1].start()  # waits on the call in flight, or (if late) finds it cached
    gate.set()
    for t in threads:
        t.join(HANG_GUARD)
    assert sorted(results) == [CACHED, USED]
    assert len(model.calls) == 1
    expander.close()


def test_a_silent_model_ends_at_the_timeout_with_a_reason() -> None:
    gate = threading.Event()
    expander = Expander(Model(obj(STRINGS), gate), timeout=0.05)
    got = expander.expand(QUESTION)
    gate.set()
    assert got.status == FAILED and got.reason == "no answer within 0.05 s"
    assert got.describe() == "failed: no answer within 0.05 s"
    expander.close()


def test_failures_are_reasons_and_not_cached() -> None:
    model = Model(None)
    expander = Expander(model, timeout=HANG_GUARD)
    assert expander.expand(QUESTION).describe() == "failed: the model is down"
    model.reply = "nothing useful"
    assert expander.expand(QUESTION).reason == "the model's reply held no search strings"
    model.reply = obj(STRINGS)
    assert expander.expand(QUESTION).status == USED
    assert len(model.calls) == 3
    expander.close()


def test_a_broken_model_adapter_is_a_failure_not_a_crash() -> None:
    def broken(prompt: str, timeout: float, question: str) -> str:
        raise KeyError("boom\nsecond line")

    got = Expander(broken, timeout=HANG_GUARD).expand(QUESTION)
    assert got.status == FAILED and "\n" not in got.reason and "KeyError" in got.reason


def test_the_cache_is_bounded() -> None:
    model = Model(obj(STRINGS))
    expander = Expander(model, timeout=HANG_GUARD, cache_size=2)
    for q in ("one two", "three four", "five six", "one two"):
        expander.expand(q)
    assert model.calls == ["one two", "three four", "five six", "one two"]
    expander.close()


# -- when to ask ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "question"),
    [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", False),
        ("otlp exporter endpoint", False),
        ("New-NetFirewallRule -Direction", False),
        ("tail sampling", False),
        ("how do I sample traces", True),
        ("sampling?", True),
        ("my app only sends a handful of tiny traces each second", True),
        ("Can the exporter batch", True),
    ],
)
def test_what_reads_as_a_question(query: str, question: bool) -> None:
    assert reads_as_question(query) is question


def test_expanded_searches_once_when_the_plain_results_are_strong() -> None:
    searches: list[tuple[str, ...]] = []

    def search(strings: tuple[str, ...]) -> int:
        searches.append(strings)
        return 5

    def standing_out(n: int) -> list[float]:
        return [1.0, 0.5, 0.4, 0.3, 0.2][:n]

    model = Model(obj(STRINGS))
    _, expansion = expanded(search, "otlp endpoint", Expander(model, 1.0), standing_out)
    assert expansion.status == NOT_NEEDED and searches == [()] and model.calls == []
    _, off = expanded(search, QUESTION, None, standing_out)
    assert off.status == OFF
    _, unbuilt = expanded(search, QUESTION, Expander(model, 1.0), lambda n: None)
    assert unbuilt.status == NOT_NEEDED and model.calls == []


def test_expanded_adds_the_strings_after_the_callers() -> None:
    searches: list[tuple[str, ...]] = []

    def search(strings: tuple[str, ...]) -> int:
        searches.append(strings)
        return len(strings)

    expander = Expander(Model(obj(STRINGS)), HANG_GUARD)
    _, got = expanded(search, QUESTION, expander, lambda n: [1.0] * n, also=("mine", STRINGS[0]))
    # the caller's two strings, then the model's not already there, up to four in all
    assert searches == [("mine", STRINGS[0]), ("mine", STRINGS[0], STRINGS[1], STRINGS[2])]
    assert got.status == CACHED or got.status == USED
    failing = Expander(Model(None), HANG_GUARD)
    result, failed = expanded(search, QUESTION, failing, lambda n: [1.0] * n)
    assert result == 0 and failed.status == FAILED


# -- configuration --------------------------------------------------------------------------------


def test_agent_yaml_expansion_block() -> None:
    cfg = parse_expansion({"base_url": "http://127.0.0.1:11434/v1", "model": "llama3.2"})
    assert cfg == ExpansionConfig("openai", "http://127.0.0.1:11434/v1", "llama3.2", "", 10.0)
    assert parse_expansion({"provider": "none"}) is None
    assert parse_expansion(
        {
            "provider": "openai",
            "base_url": "https://api.example.com/v1",
            "model": "m",
            "api_key_env": "KEY",
            "timeout": "2s",
        }
    ) == (ExpansionConfig("openai", "https://api.example.com/v1", "m", "KEY", 2.0))
    for bad, words in [
        ({"model": "m"}, "needs base_url and model"),
        ({"base_url": "http://10.0.0.1/v1", "model": "m"}, "plain http"),
        ({"base_url": "http://127.0.0.1/v1", "model": "m", "modle": 1}, "unknown key modle"),
        ({"provider": "gpt", "base_url": "http://127.0.0.1/v1"}, "expected one of"),
        ({"base_url": "http://127.0.0.1/v1", "model": "m", "timeout": "1h"}, "timeout"),
    ]:
        with pytest.raises(ConfigError, match=words):
            parse_expansion(bad)


# -- an OpenAI-compatible chat server -------------------------------------------------------------


@pytest.fixture
def chat() -> Iterator[tuple[FakeChatServer, str]]:
    server = FakeChatServer({QUESTION: STRINGS})
    url = server.start()
    yield server, url
    server.stop()


def chat_expander(url: str, timeout: float = HANG_GUARD) -> Expander:
    return Expander(ChatModel(ExpansionConfig(base_url=url, model="fake-chat")), timeout)


def test_chat_server_request_and_reply(chat: tuple[FakeChatServer, str]) -> None:
    server, url = chat
    got = chat_expander(url).expand(QUESTION)
    assert (got.status, got.strings) == (USED, tuple(STRINGS))
    (body,) = server.requests
    assert body["model"] == "fake-chat"
    assert body["response_format"] == {"type": "json_object"}
    assert QUESTION in body["messages"][-1]["content"]
    assert body["messages"][-1]["role"] == "user"


@pytest.mark.parametrize("mode", ["prose", "think"])
def test_chat_server_replies_in_prose(chat: tuple[FakeChatServer, str], mode: str) -> None:
    server, url = chat
    server.set_mode(mode)
    assert chat_expander(url).expand(QUESTION).strings == tuple(STRINGS)


def test_a_server_without_json_mode_is_asked_again(chat: tuple[FakeChatServer, str]) -> None:
    server, url = chat
    server.set_mode("no_json_mode")
    assert chat_expander(url).expand(QUESTION).status == USED
    assert ["response_format" in body for body in server.requests] == [True, False]


@pytest.mark.parametrize(
    ("mode", "status", "reason"),
    [
        ("malformed", 200, "the model's reply held no search strings"),
        ("empty", 200, "the chat server's answer held no text"),
        ("status", 500, "answered HTTP 500: model exploded"),
        ("status", 401, "refused the API key (HTTP 401)"),
    ],
)
def test_chat_server_failures(
    chat: tuple[FakeChatServer, str], mode: str, status: int, reason: str
) -> None:
    server, url = chat
    server.set_mode(mode, status=status)
    got = chat_expander(url).expand(QUESTION)
    assert got.status == FAILED and reason in got.reason


def test_a_silent_chat_server_ends_at_the_timeout(chat: tuple[FakeChatServer, str]) -> None:
    server, url = chat
    server.set_mode("hang")
    got = chat_expander(url, timeout=0.2).expand(QUESTION)
    server.release()
    assert got.status == FAILED and "0.2 s" in got.reason


def test_an_unreachable_chat_server() -> None:
    server = FakeChatServer()
    url = server.start()
    server.stop()
    got = chat_expander(url).expand(QUESTION)
    assert got.status == FAILED and got.reason.startswith("cannot reach the chat server")


# -- a project's search ---------------------------------------------------------------------------


def test_project_search_with_expansion(tmp_path: Path, chat: tuple[FakeChatServer, str]) -> None:
    server, url = chat
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "# Retries\n\nThe client retries unsuccessful requests with exponential backoff.\n",
        encoding="utf-8",
    )
    (tmp_path / "docs" / "b.md").write_text(
        "# Endpoint\n\nSet the collector address.\n", encoding="utf-8"
    )
    (tmp_path / "agent.yaml").write_text(
        f"harness:\n  knowledge:\n    expansion:\n      base_url: {url}\n      model: fake\n",
        encoding="utf-8",
    )
    settings = resolve_settings(cwd=tmp_path, store_base=tmp_path / "stores")
    with Project(settings) as project:
        project.index()
        plain = project.search(SearchRequest(QUESTION))
        assert plain.expansion is None and plain.hits == []
        result = project.search(SearchRequest(QUESTION, expand=True))
        assert result.expansion is not None and result.expansion.status == USED
        assert result.hits and result.hits[0].section.startswith("Retries")
        assert result.hits[0].found_by != ("query",)
        again = project.search(SearchRequest(QUESTION, expand=True))
        assert again.expansion is not None and again.expansion.status == CACHED
    assert server.calls == 1
