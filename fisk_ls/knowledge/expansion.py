"""Question expansion: a language model's search strings for a person's question.

A person types the question in their own words, which are often not the docs' words; a language
model can bridge that. It is asked once per question for three strings (a keyword query in the
docs' likely vocabulary, a short hypothetical answer, a rephrasing), which the search fuses with
the question exactly as an agent's ``also`` strings. The model is anything that turns a prompt
into a reply (``Ask``): an OpenAI-compatible chat server (``ChatModel``), or the editor's own
model asked through the language server's client.

``Expander`` wraps a model with what every front end needs: one prompt and one parser, a bounded
cache per question (a palette re-running the same text never calls the model again), a deadline,
and failures turned into a one-line reason (the search then keeps its plain results).
:func:`expanded` runs the plain search first and asks the model only when :func:`needs_expansion`
says the plain results are weak, so a keyword search whose best hits stand out costs no model
time.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from .sanitize import one_line
from .settings_schema import ALSO, QUERY

if TYPE_CHECKING:
    from concurrent.futures import Future

    from .config import ExpansionConfig

OFF = "off"
"""Not asked, or no expander configured."""
NOT_NEEDED = "not needed"
"""The plain results were strong: no model call."""
USED = "used"
CACHED = "cached"
FAILED = "failed"

MAX_STRINGS = 3
"""Strings taken from one reply (keywords, answer, rephrasing)."""
CACHE_SIZE = 512
"""Questions whose strings are kept (least recently used first out)."""
MAX_REASON = 160
"""Characters of a failure's reason."""

LABELS = ("keywords", "answer", "rephrasing")
_ALIASES = {"keyword": "keywords", "rephrase": "rephrasing", "rephrased": "rephrasing"}

SYSTEM = (
    "You help a documentation search engine (BM25 keyword search) find the section that answers "
    "a user's question. You cannot see the documentation. Reply with one JSON object only."
)


def prompt(question: str) -> str:
    """The one user message every model gets: the question verbatim, then what to write."""
    return "\n".join(
        [
            "A user is searching a project's documentation with this question:",
            "",
            question,
            "",
            "Write three search strings that would find the documentation section that answers "
            "it, from your general knowledge (you cannot see the docs):",
            '- "keywords": a keyword query in the words the documentation would most likely use '
            "(names of settings, commands, API terms, headings you would expect), 3-10 words;",
            '- "answer": a one- or two-sentence hypothetical answer, phrased as the documentation '
            "would say it (it may be wrong in details);",
            '- "rephrasing": the question said once more, in plain words a docs writer would use.',
            "Write them in the language of the question; identifiers stay as they are.",
            'Reply with only a JSON object: {"keywords": "...", "answer": "...", '
            '"rephrasing": "..."}',
        ]
    )


class ExpansionFailed(Exception):
    """The model gave no usable strings; the message is the one-line reason."""


class Ask(Protocol):
    """A language model: the prompt in, its whole reply out, within ``timeout`` seconds
    (``ExpansionFailed`` with a short reason otherwise). ``question``: the question the prompt
    holds, for a model that shows it (an editor)."""

    def __call__(self, prompt: str, timeout: float, question: str) -> str: ...


@dataclass(frozen=True)
class Expansion:
    """What expansion did for one search: ``status`` (off / not needed / used / cached /
    failed), the strings fused, and a failure's reason."""

    status: str
    strings: tuple[str, ...] = ()
    reason: str = ""

    def describe(self) -> str:
        """One line for a result: "used", "failed: no answer within 10 s", ..."""
        return f"{self.status}: {self.reason}" if self.reason else self.status


# -- the reply ------------------------------------------------------------------------------------

_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_LABELLED = re.compile(
    r"^\s*[-*\d.)\s]*\**\s*(keywords?|answer|rephras(?:e|ed|ing))\s*\**\s*[:=-]\s*\**\s*(.+)$",
    re.IGNORECASE,
)


def parse_reply(reply: str, question: str) -> tuple[str, ...]:
    """The search strings in a model's reply: a JSON object with the three labels (also inside
    a code fence or prose, after a reasoning model's ``<think>`` block), else lines labelled
    ``keywords:`` / ``answer:`` / ``rephrasing:``. Validated like ``also`` strings: whitespace
    collapsed, cut to the query's length limit; blank ones, repeats and the question itself
    dropped; at most three. Empty when nothing parses."""
    text = _THINK.sub("", reply)
    found: list[object] = []
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            value = json.loads(text[start : end + 1])
        except ValueError:
            value = None
        if isinstance(value, dict):
            named = {_ALIASES.get(str(k).lower(), str(k).lower()): v for k, v in value.items()}
            found += [named.get(label) for label in LABELS]
    if not any(isinstance(v, str) and v.strip() for v in found):
        for line in text.splitlines():
            if match := _LABELLED.match(line):
                found.append(match.group(2).strip().strip("\"'`,"))
    out: list[str] = []
    seen = {" ".join(question.split()).casefold()}
    limit = QUERY.max_length or 2000
    for value in found:
        if not isinstance(value, str):
            continue
        string = " ".join(value.split())[:limit]
        if string and string.casefold() not in seen and len(out) < MAX_STRINGS:
            seen.add(string.casefold())
            out.append(string)
    return tuple(out)


# -- the expander ---------------------------------------------------------------------------------


class Expander:
    """A model with one prompt, one parser, a cache per question and a deadline.

    Thread-safe. The model runs on a small pool of its own, so a model that ignores its timeout
    cannot hold the search past ``timeout``; two searches of the same question at once share one
    call. Failures are not cached: the next search asks again."""

    def __init__(self, ask: Ask, timeout: float, *, cache_size: int = CACHE_SIZE) -> None:
        self.ask = ask
        self.timeout = timeout
        self._cache: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._cache_size = cache_size
        self._pending: dict[str, Future[tuple[str, ...]]] = {}
        self._lock = threading.Lock()
        from concurrent.futures import ThreadPoolExecutor  # here: a search without an expander

        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="fisk-expand")

    def expand(self, question: str) -> Expansion:
        key = " ".join(question.split()).casefold()
        with self._lock:
            if (strings := self._cache.get(key)) is not None:
                self._cache.move_to_end(key)
                return Expansion(CACHED, strings)
            future = self._pending.get(key)
            owner = future is None
            if future is None:
                future = self._pending[key] = self._pool.submit(self._call, question)
        from concurrent.futures import TimeoutError as FutureTimeout

        try:
            strings = future.result(timeout=self.timeout)
        except FutureTimeout:
            return Expansion(FAILED, reason=f"no answer within {self.timeout:g} s")
        except ExpansionFailed as exc:
            return Expansion(FAILED, reason=_reason(str(exc)))
        except Exception as exc:  # a model adapter's bug must not fail the search
            return Expansion(FAILED, reason=_reason(f"{type(exc).__name__}: {exc}"))
        finally:
            if owner:
                with self._lock:
                    self._pending.pop(key, None)
        with self._lock:
            self._cache[key] = strings
            self._cache.move_to_end(key)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return Expansion(USED if owner else CACHED, strings)

    def _call(self, question: str) -> tuple[str, ...]:
        reply = self.ask(prompt(question), self.timeout, question)
        strings = parse_reply(reply, question)
        if not strings:
            raise ExpansionFailed("the model's reply held no search strings")
        return strings

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        closer = getattr(self.ask, "close", None)
        if callable(closer):
            closer()


def _reason(text: str) -> str:
    return one_line(text, MAX_REASON) or "unknown error"


def make_expander(cfg: ExpansionConfig | None) -> Expander | None:
    """The expander a configuration names (None: none configured, or ``editor``, whose model
    only the language server's client can reach)."""
    if cfg is None or cfg.provider != "openai":
        return None
    from .chat import ChatModel  # here: a search without expansion never imports httpx for it

    return Expander(ChatModel(cfg), cfg.timeout)


# -- when to ask, and the search around it --------------------------------------------------------

_QUESTION_WORDS = frozenset(
    {
        *("how", "what", "why", "when", "where", "which", "who", "whom", "whose"),
        *("can", "could", "does", "do", "did", "is", "are", "was", "were"),
        *("should", "would", "will", "may", "must", "shall"),
    }
)


LONG_QUESTION = 6
"""Words past which a query reads as a sentence: keyword queries typed into a palette run to six
(the docs' terms, an identifier, an option name); a person's own question is longer."""
FLAT = 0.75
"""The plain results are flat when the fifth hit scores at least this share of the first."""
FLAT_DEPTH = 5


def reads_as_question(question: str) -> bool:
    """Several words asked as a question or said as a sentence: a question mark, a question word
    first, or more than ``LONG_QUESTION`` words. A few keywords or an identifier are not."""
    words = [w for w in question.split() if any(ch.isalnum() for ch in w)]
    if len(words) > LONG_QUESTION or "?" in question:
        return True
    if len(words) < 3:
        return False
    return words[0].strip("¿¡\"'(").casefold() in _QUESTION_WORDS


def flat(scores: Sequence[float]) -> bool:
    """Whether the plain results cannot tell their top five apart (the fifth scores at least
    ``FLAT`` of the first): the question's words are everywhere in the docs alike. Nothing
    found is flat; fewer than five hits (the words are almost nowhere) are flat unless the first
    stands out from the last, and a single hit is the one section holding the words (an
    identifier in a small project): not flat."""
    if not scores:
        return True
    last = scores[min(len(scores), FLAT_DEPTH) - 1]
    return len(scores) > 1 and last >= FLAT * scores[0]


def needs_expansion(question: str, scores: Sequence[float]) -> bool:
    """Whether a model's strings are worth asking for, from the question and the plain search's
    hit scores (best first): when the question reads as one (:func:`reads_as_question`: its
    words are the asker's, not the docs'), or the results are :func:`flat` (nothing or little
    found, or a keyword found in many sections alike: an option name every cmdlet page lists).
    A keyword or identifier query whose best hits stand out costs no model call.
    bench/expansion.py measures this rule and the
    alternatives on the dev sets (bench/tuning.md)."""
    return reads_as_question(question) or flat(scores)


R = TypeVar("R")


def expanded(
    search: Callable[[tuple[str, ...]], R],
    question: str,
    expander: Expander | None,
    scores: Callable[[R], Sequence[float] | None],
    also: Sequence[str] = (),
) -> tuple[R, Expansion]:
    """``search`` with the caller's ``also``, then, when ``expander`` is given and the plain
    results are weak (:func:`needs_expansion` on the ``scores`` of their hits, best first;
    None: the index cannot answer yet, so no string would help), again with the model's strings
    after the caller's (up to the ``also`` limit). A failed expansion keeps the plain results."""
    plain = search(tuple(also))
    if expander is None:
        return plain, Expansion(OFF)
    found = scores(plain)
    if found is None or not needs_expansion(question, found):
        return plain, Expansion(NOT_NEEDED)
    got = expander.expand(question)
    room = (ALSO.max_items or 4) - len(also)
    strings = tuple(s for s in got.strings if s not in also)[: max(room, 0)]
    if got.status == FAILED or not strings:
        return plain, got
    return search((*also, *strings)), Expansion(got.status, strings)
