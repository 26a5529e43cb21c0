"""The memory tools an agent is given: names, descriptions, argument schemas, and each call.

One source of truth for every adapter that hands the tools to a model: the
MCP server (``mcp_server``) and the frameworks' tools (``integrations``, through
``model_tools``) all build theirs from ``TOOLS``, so the names,
the words a model reads and the arguments it may pass cannot drift apart.
Each ``ToolSpec.run`` calls ``AsyncMemoryClient`` as a ``Principal`` (who the
call acts as) and returns plain JSON.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.core.requests import SearchQuery, WriteItem, arguments_model
from hindsight_redis.lifecycle.review import Keep
from hindsight_redis.service.tokens import Principal, Scope

JSON = Any


def plain(value: Any) -> JSON:
    """Dataclasses (receipts, records, hits), tuples and dicts as plain JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: plain(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


def writer(principal: Principal, agent_id: str | None) -> str | None:
    """Who a write records as its author: the caller, or anyone for an admin."""
    if principal.scope == "admin" and agent_id:
        return agent_id
    return principal.agent_id or None


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="ignore")


WriteArguments = arguments_model("WriteArguments", WriteItem)
"""``memory_write``: a write's fields (``core.requests.WriteItem``), ``content`` first."""
SearchArguments = arguments_model("SearchArguments", SearchQuery)
"""``memory_search``: the query and the search options (``core.requests.SearchQuery``);
who searches comes from the call's principal, never from an argument."""


class MemoryIdArguments(_Arguments):
    """A tool on one memory."""

    memory_id: str


class ForgetArguments(_Arguments):
    """``memory_forget``."""

    memory_id: str
    force: bool = False


class NoArguments(_Arguments):
    """A tool without arguments."""


class ConflictsArguments(_Arguments):
    """``memory_conflicts``."""

    limit: int = 20


class ReviewArguments(_Arguments):
    """``memory_review``."""

    state: Literal["held", "rejected", "all"] = Field(
        "held", description="held (awaiting a decision), rejected, or all"
    )
    limit: int = Field(20, description="at most this many, newest first")


class EraseArguments(_Arguments):
    """``memory_erase``: what to erase (any of them: their union)."""

    ids: list[str] | None = Field(None, description="Memory ids to erase.")
    agent_id: str | None = Field(None, description="Erase everything this agent wrote.")
    tag: str | None = Field(None, description='Erase every memory with this tag ("user:alice").')
    session_id: str | None = Field(None, description="Erase every memory of this session.")
    source: str | None = Field(None, description="Erase every memory from this source.")
    dry_run: bool = Field(False, description="Only find and count; erase nothing.")


class ResolveArguments(_Arguments):
    """``memory_resolve_conflict``."""

    memory_id: str
    keep: Keep
    other_id: str | None = None
    note: str | None = None


Run = Callable[[AsyncMemoryClient, Principal, Any], Awaitable[JSON]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: what a model reads (name, title, description, arguments) and what it does.

    ``scope`` is what a token needs to call it; ``returns`` the annotation of
    its JSON result; the hints tell clients whether it changes anything.
    """

    name: str
    title: str
    description: str
    arguments: type[BaseModel]
    scope: Scope
    returns: Any
    run: Run
    read_only: bool = False
    idempotent: bool = False
    destructive: bool | None = None

    def parameters(self) -> list[inspect.Parameter]:
        """The arguments as keyword parameters of a function (for signature-reading adapters),
        each annotated with its description."""
        return [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=Annotated[field.annotation, Field(description=field.description)]
                if field.description
                else field.annotation,
                default=inspect.Parameter.empty if field.is_required() else field.default,
            )
            for name, field in self.arguments.model_fields.items()
        ]


async def _write(c: AsyncMemoryClient, p: Principal, a: BaseModel) -> JSON:
    fields = a.model_dump()
    content, agent_id = fields.pop("content"), fields.pop("agent_id")
    receipt = await c.write(
        content,
        agent_id=writer(p, agent_id),
        as_agent=p.agent_id,
        identified_by="token" if p.token_id else None,  # the memory's provenance
        **fields,
    )
    return plain(receipt)


async def _search(c: AsyncMemoryClient, p: Principal, a: BaseModel) -> JSON:
    options = a.model_dump()
    return plain(await c.search(options.pop("query"), as_agent=p.agent_id, **options))


async def _get(c: AsyncMemoryClient, p: Principal, a: MemoryIdArguments) -> JSON:
    return plain(await c.get(a.memory_id, as_agent=p.agent_id))


async def _forget(c: AsyncMemoryClient, p: Principal, a: ForgetArguments) -> JSON:
    return plain(await c.forget(a.memory_id, force=a.force, as_agent=p.agent_id))


async def _restore(c: AsyncMemoryClient, p: Principal, a: MemoryIdArguments) -> JSON:
    return plain(await c.restore(a.memory_id, as_agent=p.agent_id))


async def _stats(c: AsyncMemoryClient, p: Principal, a: NoArguments) -> JSON:
    return plain(await c.stats())


async def _conflicts(c: AsyncMemoryClient, p: Principal, a: ConflictsArguments) -> JSON:
    found = []
    for record in await c.conflicts(a.limit):
        if await c.get(record.id, as_agent=p.agent_id) is not None:  # visible to the caller
            found.append(plain(record))
    return found


async def _resolve(c: AsyncMemoryClient, p: Principal, a: ResolveArguments) -> JSON:
    return plain(
        await c.resolve_conflict(
            a.memory_id, a.keep, other_id=a.other_id, note=a.note, as_agent=p.agent_id
        )
    )


async def _review(c: AsyncMemoryClient, p: Principal, a: ReviewArguments) -> JSON:
    return plain(await c.held(state=a.state, limit=a.limit))


async def _approve(c: AsyncMemoryClient, p: Principal, a: MemoryIdArguments) -> JSON:
    return plain(await c.approve(a.memory_id, as_agent=p.agent_id or None))


async def _reject(c: AsyncMemoryClient, p: Principal, a: MemoryIdArguments) -> JSON:
    return plain(await c.reject(a.memory_id, as_agent=p.agent_id or None))


async def _erase(c: AsyncMemoryClient, p: Principal, a: EraseArguments) -> JSON:
    receipt = await c.erase(
        a.ids or None,
        agent_id=a.agent_id,
        tag=a.tag,
        session_id=a.session_id,
        source=a.source,
        dry_run=a.dry_run,
        as_agent=p.agent_id or None,
    )
    return plain(receipt)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="memory_write",
        title="Write a memory",
        description=(
            "Remember something for later conversations; returns the memory's id and status.\n\n"
            'Call it when the user states a preference ("I prefer...", "always use..."), a '
            "fact about themselves or their project, when a decision is made, or when a "
            "complex task is finished (what was done and what worked). Do not call it for "
            "chit-chat, greetings or acknowledgements: they are dropped. The server filters, "
            "summarizes long text and indexes it; wait=true returns once it is searchable, or "
            'says why it was dropped (within timeout_s seconds). visibility="private": only '
            "you will see it. protected=true: never forgotten automatically. importance (0..1) "
            "is a hint; idempotency_key makes a retried write a no-op; half_life_days: how fast "
            "it fades when unused (e.g. 365 for a lasting preference). occurred_at: when what "
            "it tells of happened (unix seconds), if known and not now (e.g. the date of the "
            "meeting it reports); searches show it and can filter on it. task_type e.g. "
            '"preference", "dialogue", "code". context: the text just before it (e.g. the '
            "previous message), when the memory alone is ambiguous; it helps find the memory "
            "by meaning but is not stored as its content. agent_id: ignored unless your "
            "token is an admin token (you are the writer). A receipt with conflicts_with means "
            "the memory contradicts those: memory_resolve_conflict settles it. A memory that "
            "gives orders to whoever reads it later, instead of recording something, is held "
            "for review (status held, with its reason) and stored only if a person approves."
        ),
        arguments=WriteArguments,
        scope="write",
        returns=dict[str, Any],
        run=_write,
    ),
    ToolSpec(
        name="memory_search",
        title="Search memories",
        description=(
            "Recall what was said or learned before, by meaning and by keywords.\n\n"
            'Call it when the user refers to the past ("last time", "as before", "like we '
            'did", "my preference", a person, project or error seen earlier) and before asking '
            "the user for something they may have told you already. Keywords find names, "
            "identifiers and error codes exactly. You see shared memories and your own private "
            "ones. Filters narrow the pool: agent_id (written by that agent), session_id, "
            "task_type, tags (all must match), since/until (unix seconds it was written), "
            "occurred_since/occurred_until (unix seconds it happened: only memories written "
            "with occurred_at match). A hit's occurred_at says when it happened (use it to "
            'answer "when" questions). max_tokens: stop '
            "adding hits before their content passes that many tokens. A hit with "
            "conflicts_with contradicts those memories (unresolved); of such a pair the newer "
            "ranks first unless the question is about the past."
        ),
        arguments=SearchArguments,
        scope="read",
        returns=list[dict[str, Any]],
        run=_search,
        read_only=True,
    ),
    ToolSpec(
        name="memory_get",
        title="Get a memory",
        description=(
            "One memory by id (active, archived, merged or dropped with its reason), or null "
            "(also for a write held for review: see memory_review)."
        ),
        arguments=MemoryIdArguments,
        scope="read",
        returns=dict[str, Any] | None,
        run=_get,
        read_only=True,
    ),
    ToolSpec(
        name="memory_forget",
        title="Forget a memory",
        description=(
            "Archive a memory that is wrong or obsolete: it leaves search results, and "
            "memory_restore brings it back. A protected memory is refused unless force=true."
        ),
        arguments=ForgetArguments,
        scope="write",
        returns=dict[str, Any],
        run=_forget,
        idempotent=True,
        destructive=False,
    ),
    ToolSpec(
        name="memory_restore",
        title="Restore a memory",
        description=(
            "Bring an archived (forgotten) memory back into search results; for a memory "
            "archived by memory_resolve_conflict, the conflict is open again."
        ),
        arguments=MemoryIdArguments,
        scope="write",
        returns=dict[str, Any],
        run=_restore,
        idempotent=True,
    ),
    ToolSpec(
        name="memory_stats",
        title="Memory statistics",
        description=(
            "Counters of the pool: memories active/archived, accepted, indexed, dropped per "
            "reason, backlog, dead letters. For operators; not needed to answer users."
        ),
        arguments=NoArguments,
        scope="read",
        returns=dict[str, Any],
        run=_stats,
        read_only=True,
    ),
    ToolSpec(
        name="memory_conflicts",
        title="List contradicting memories",
        description=(
            "Memories flagged as contradicting another (newest first), each with the ids it "
            "conflicts with. Call it when the user asks what is inconsistent, or before "
            "memory_resolve_conflict."
        ),
        arguments=ConflictsArguments,
        scope="read",
        returns=list[dict[str, Any]],
        run=_conflicts,
        read_only=True,
    ),
    ToolSpec(
        name="memory_resolve_conflict",
        title="Resolve a contradiction",
        description=(
            "Settle a flagged contradiction once the user has said which is right: "
            'keep="new" archives the older memory (superseded by the newer), keep="old" the '
            'newer one, keep="both" only clears the flag (both are true). other_id: just that '
            "pair (default: every memory it conflicts with); note: why. Recorded with who and "
            "when; memory_restore undoes it."
        ),
        arguments=ResolveArguments,
        scope="write",
        returns=list[dict[str, Any]],
        run=_resolve,
    ),
    ToolSpec(
        name="memory_review",
        title="List writes held for review",
        description=(
            "Writes held for review instead of being stored (admin tokens only): each with "
            "its id, content, writer, provenance and hold_reason (e.g. poisoning:override: it "
            "tries to instruct whoever reads it; secret:...: it carried a secret). They are "
            "invisible to searches until memory_approve; memory_reject keeps one out for "
            'good. state="rejected" lists those rejected.'
        ),
        arguments=ReviewArguments,
        scope="admin",
        returns=list[dict[str, Any]],
        run=_review,
        read_only=True,
    ),
    ToolSpec(
        name="memory_approve",
        title="Approve a held write",
        description=(
            "Release a write held for review (admin tokens only), once a person has read it "
            "and judged it safe: it is then stored and searchable like any memory, marked "
            "reviewed. Recorded in the audit trail with who approved it."
        ),
        arguments=MemoryIdArguments,
        scope="admin",
        returns=dict[str, Any],
        run=_approve,
    ),
    ToolSpec(
        name="memory_reject",
        title="Reject a held write",
        description=(
            "Reject a write held for review (admin tokens only): it is kept for the record, "
            "never searchable. Recorded in the audit trail with who rejected it."
        ),
        arguments=MemoryIdArguments,
        scope="admin",
        returns=dict[str, Any],
        run=_reject,
        idempotent=True,
    ),
    ToolSpec(
        name="memory_erase",
        title="Erase memories for good",
        description=(
            "Erase every copy of memories, for good (a person's right to erasure): by ids, "
            'the agent that wrote them, a tag (e.g. "user:alice"), a session or a source; '
            "what any of them names goes, processed or not. Not undoable, unlike "
            "memory_forget. Returns a receipt: what was erased where, a digest of the ids, "
            "and the export files that still hold some (to delete by hand); it is recorded "
            "in the audit trail with who asked. dry_run=true only counts. Admin tokens only."
        ),
        arguments=EraseArguments,
        scope="admin",
        returns=dict[str, Any],
        run=_erase,
        destructive=True,
    ),
)
"""Every tool, in the order adapters list them."""
