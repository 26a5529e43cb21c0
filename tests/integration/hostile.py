"""Hostile input for the property tests: strategies, a pool of two namespaces, the checks.

The strategies draw mostly valid arguments with hostile text (query syntax,
look-alike letters, control characters, floods) and now and then one that
is wrong (a lone surrogate, a wrong type, a number beyond a float), so that
most calls reach Redis and some are refused. ``clear`` is what a refusal must
look like, ``check_stored`` what an accepted write must have become.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hypothesis import HealthCheck, event
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from hindsight_redis import AsyncMemoryClient, Settings
from hindsight_redis.core.context import kept_context
from hindsight_redis.core.models import MemoryRecord, WriteReceipt
from hindsight_redis.errors import HindsightError, InvalidArgument
from tests.integration.helpers import Drain

T = TypeVar("T")
CALL_TIMEOUT_S = 30.0  # a call that takes longer is a hang
PROPERTY = hsettings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,  # CI runs the same examples every time
)

WORDS = ["billing", "service", "deploy", "ERR_CONN_RESET", "eu-west-1", "alice", "账单", "Tuesday"]
SYNTAX = [
    "@tag:{x} | *",
    "-",
    '"',
    "\\",
    "%%x%%",
    "*)|(*",
    "{",
    "}",
    "*",
    "|",
    ":",
    "'",
    "(",
    ")",
    "@namespace:{other}",
    "-@visibility:{private}",
    "@agent_id:{x}",
    "=>{$weight: 9}",
    "$BLOB",
    "~billing",
    "[-inf +inf]",
    "@content:*",
    "*=>[KNN 10 @vec $BLOB]",
    "\\}",
    "{*}",
    "%",
    "$",
]
LOOKALIKES = [
    "ｂｉｌｌｉｎｇ ｓｅｒｖｉｃｅ",
    "bіllіng sеrvіcе",
    "ΒΙLLING",
    "ℬ𝒾𝓁𝓁𝒾𝓃ℊ",
    "b\u0301illing",
    "bil\u200bling",
    "ＥＲＲ＿ＣＯＮＮ＿ＲＥＳＥＴ",
    "\u202edeploy",
    "\ufeffalice",
    "ǅ",
    "ﬁle",
]
ODD = ["\x00", "\x1f", "\x7f", "\r\n", "\t", "\u2028", "\U0001f600", "\ufffd", "\x85", "\u00a0"]


def rarely(usual: st.SearchStrategy[Any], odd: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``usual`` six times in seven, else ``odd``: one bad argument at a time, mostly.

    (``one_of`` would not do: it draws its branches evenly, repeated ones too.)
    """
    return st.sampled_from([usual] * 6 + [odd]).flatmap(lambda chosen: chosen)


piece = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from(SYNTAX),
    st.sampled_from(LOOKALIKES),
    st.sampled_from(ODD),
    st.text(max_size=12),
)
joined = st.one_of(
    st.lists(piece, min_size=1, max_size=8).map(" ".join),
    st.lists(piece, min_size=1, max_size=8).map("".join),
)
"""Valid but hostile text: query syntax, look-alikes, control characters, anything."""
with_surrogate = st.tuples(joined, st.integers(0xD800, 0xDFFF).map(chr), joined).map("".join)
flood = st.builds(
    operator.mul,
    st.sampled_from(["*", "{", "a ", "-", "\\", "账", "x|", "\x00"]),
    st.sampled_from([127, 255, 7_999, 8_001, 32_001, 200_000]),
)
hostile_text = st.one_of(joined, joined, joined, joined, with_surrogate, flood)
json_junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**400), 10**400),
    st.floats(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
"""Values of the wrong type that JSON can carry (MCP arguments)."""
wrong_type = st.one_of(json_junk, st.binary(max_size=6))
identifier = st.one_of(
    st.sampled_from(["x", "y", "s1", "ops", "n1", " ops ", "x} | @visibility:{private", "*"]),
    st.lists(st.sampled_from([*WORDS, *SYNTAX, *LOOKALIKES]), min_size=1, max_size=3).map(" ".join),
    st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=20),
)
"""Valid identifiers and tags (no control characters) that look like filter syntax."""
number = st.one_of(
    st.floats(),
    st.integers(-(10**30), 10**30),
    st.sampled_from([10**400, -(10**400), 0, 1, 1.5, 1e308]),
)
top_k = rarely(
    st.integers(1, 100),
    st.one_of(
        st.sampled_from([0, 101, -1, 2.5, "5", True, None, 10**5000]),
        st.integers(-(10**20), 10**20),
    ),
)
odd_text = st.one_of(hostile_text, wrong_type)
bad_budget = st.one_of(st.integers(-5, 0), wrong_type)
when = rarely(st.one_of(st.none(), st.floats(0, 4e9), st.integers(0, 4 * 10**9)), number)


def tags_or(junk: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Tag lists, mostly valid, sometimes hostile, huge, or ``junk``."""
    return rarely(
        st.one_of(st.none(), st.lists(identifier, max_size=3)),
        st.one_of(
            st.lists(hostile_text, min_size=1, max_size=3),
            st.just(["ops"] * 10_000),
            junk,
        ),
    )


def text_or(junk: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Identifier-like values: mostly valid ones, sometimes hostile text or ``junk``."""
    return rarely(st.one_of(st.none(), st.just(""), identifier), st.one_of(hostile_text, junk))


tag_list = tags_or(wrong_type)
text_or_junk = text_or(wrong_type)


async def bounded(call: Awaitable[T]) -> T:
    """``call``, failing the test when it hangs."""
    return await asyncio.wait_for(call, CALL_TIMEOUT_S)


def clear(error: HindsightError) -> None:
    """A refusal: bad input, said in words (never a Redis error passed through)."""
    assert isinstance(error, InvalidArgument), f"{type(error).__name__}: {error}"
    event(f"refused: {type(error).__name__}: {str(error)[:25]}")
    assert len(str(error)) > 10, repr(error)
    for raw in ("ResponseError", "Syntax error", "redis.exceptions", "Traceback"):
        assert raw not in str(error), error


# -- a pool of two namespaces --------------------------------------------------

POOL_TEXTS = [
    "The billing service deploy window is Tuesday 14:00 UTC in eu-west-1",
    "alice saw ERR_CONN_RESET from the billing-service proxy: @tag:{x} | * -",
    "账单服务 在周二 部署 billing deploy notes for the team",
    'Quoted "billing" {braces} and \\backslashes\\ in a deploy runbook',
]


@dataclass
class Pool:
    """Memories of namespace ``test`` (the client's) and ``other``, as ids."""

    shared: dict[str, str]  # id -> content, visible to anyone in "test"
    private_x: dict[str, str]  # x's private memories in "test"
    foreign: set[str]  # every memory of namespace "other"
    private_y: dict[str, str] = field(default_factory=dict)  # written by y during a test

    def visible_to(self, viewer: str) -> dict[str, str]:
        """What ``viewer`` may find in namespace ``test``."""
        own = {"x": self.private_x, "y": self.private_y}.get(viewer, {})
        return {**self.shared, **own}


async def write_pool(client: AsyncMemoryClient, settings: Settings, drain: Drain) -> Pool:
    """Shared and private memories in two namespaces, indexed."""
    other = settings.model_copy(update={"namespace": "other"})
    shared, private = {}, {}
    for n, text in enumerate(POOL_TEXTS):
        receipt = await client.write(text, as_agent="x", tags=["ops", f"n{n}"], session_id="s1")
        shared[receipt.id] = text
        receipt = await client.write(text + " (x's own)", as_agent="x", visibility="private")
        private[receipt.id] = text + " (x's own)"
    async with AsyncMemoryClient(other) as theirs:
        items = [
            {"content": f"{text} [other]", "visibility": visibility, "tags": ["ops"]}
            for text in POOL_TEXTS
            for visibility in ("shared", "private")
        ]
        foreign = {r.id for r in await theirs.write_many(items, as_agent="y")}
    await drain()
    await drain(other)
    for memory_id in (*shared, *private):
        record = await client.get(memory_id)
        assert record is not None and record.status == "active", record
    return Pool(shared, private, foreign)


# -- writes ------------------------------------------------------------------

content = st.one_of(
    st.tuples(st.sampled_from(POOL_TEXTS), joined).map(" ".join),
    st.tuples(joined, st.sampled_from(POOL_TEXTS), joined).map(" ".join),
    joined,
    st.builds(operator.mul, st.sampled_from(POOL_TEXTS), st.integers(5, 60)),  # summarized
)
"""What agents write: real sentences with hostile text around them, some long."""


def write_fields_or(junk: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """The keyword arguments of a write: hostile values, or ``junk`` of the wrong type."""
    text = text_or(junk)
    odd_number = st.one_of(number, junk)
    return st.fixed_dictionaries(
        {"content": rarely(content, st.one_of(hostile_text, junk))},
        optional={
            "context": rarely(st.one_of(st.none(), joined), st.one_of(hostile_text, junk)),
            "agent_id": text,
            "session_id": text,
            "task_type": text,
            "source": rarely(st.one_of(st.none(), joined), st.one_of(hostile_text, junk)),
            "tags": tags_or(junk),
            "visibility": rarely(st.sampled_from(["shared", "private"]), text),
            "protected": rarely(st.booleans(), junk),
            "importance": rarely(st.one_of(st.none(), st.floats(0, 1)), odd_number),
            "half_life_days": rarely(st.one_of(st.none(), st.floats(0.5, 3650)), odd_number),
            "idempotency_key": rarely(st.none(), text),
        },
    )


write_fields = write_fields_or(wrong_type)


async def check_stored(
    client: AsyncMemoryClient, fields: Mapping[str, Any], receipt: WriteReceipt
) -> None:
    """The write's fate: stored exactly, or dropped with a reason, or merged into a memory."""
    assert receipt.status in ("indexed", "merged", "dropped"), receipt
    event(f"written: {receipt.status}")
    record = await client.get(receipt.id)
    assert record is not None, receipt
    if receipt.duplicate:
        return  # an idempotent retry: the first write's memory, whatever this one said
    content = fields["content"]
    if receipt.status == "dropped":
        assert record.status == "dropped" and record.reason, record
        assert content.startswith(record.content)
        return
    if receipt.status == "merged":
        assert record.status == "merged" and record.merged_into
        assert await client.get(record.merged_into) is not None
        return
    assert record.status == "active"
    assert content in (record.content, record.original), "content altered"
    same_metadata(record, fields)


def same_metadata(record: MemoryRecord, fields: Mapping[str, Any]) -> None:
    assert record.agent_id == (fields.get("agent_id") or "")
    assert record.session_id == (fields.get("session_id") or "")
    assert record.task_type == (fields.get("task_type") or "")
    assert record.source == (fields.get("source") or "")
    assert record.tags == tuple(dict.fromkeys(t.strip() for t in fields.get("tags") or ()))
    assert record.visibility == (fields.get("visibility") or "shared")
    assert record.protected is bool(fields.get("protected"))
    given = fields.get("context")
    assert record.context == ((kept_context(given) or None) if given else None)
