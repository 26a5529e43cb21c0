"""``hindsight-redis demo``: a scripted multi-agent session on the embedded default.

Three agents share one namespace. They write useful facts, chit-chat, a long
report, a near-duplicate and a contradiction, in English and Chinese; a worker
filters and indexes them; then the agents search. The output shows what was
kept, what was dropped and why, and what each search found.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.core.models import explain_reason
from hindsight_redis.ops.admin import delete_namespace
from hindsight_redis.ops.render import fit, snippet
from hindsight_redis.pipeline.worker import Worker
from hindsight_redis.settings import Settings

SCRIPT: list[tuple[str, str]] = [
    ("planner", "User alice prefers answers in Chinese and wants a summary every Friday."),
    ("planner", "ok, thanks!"),
    (
        "coder",
        "The billing-service-v2 deploy failed with ERR_CONN_RESET; rollback done by bob at 14:05.",
    ),
    ("coder", "got it 👍"),
    ("support", "Haha, that sounds like so much fun, you are amazing!"),
    ("support", "好的"),
    ("support", "用户王芳对花生过敏，预订餐厅时必须提前告知。"),
    ("support", "明白了，请继续"),
    ("planner", "The quarterly offsite is in Lisbon from May 3 to May 5; budget is 12,000 EUR."),
    (
        "coder",
        "The billing-service-v2 deploy failed with ERR_CONN_RESET; rollback done by bob at 14:05!",
    ),
    ("planner", "The quarterly offsite is in Lisbon from May 3 to May 6; budget is 12,000 EUR."),
    (
        "coder",
        "Incident report for user_42: at 09:12 the payments API began returning 502s after the "
        "connection pool was resized from 50 to 5 in config commit 8f3a2c. Retries amplified the "
        "load on the database, which hit its max_connections limit at 09:15. The on-call engineer "
        "rolled the config back at 09:31, the pool recovered by 09:33 and error rates returned to "
        "baseline by 09:40. Follow-ups: add a lint rule for pool sizes below 20, alert on pool "
        "saturation above 80 percent, and document the rollback procedure in the runbook. No data "
        "was lost; 1,204 payments were retried automatically and all succeeded.",
    ),
]
QUERIES = [
    ("support", "what language does alice want?", "hybrid"),
    ("planner", "ERR_CONN_RESET", "keyword"),
    ("coder", "王芳 过敏", "hybrid"),
    ("planner", "when is the offsite?", "hybrid"),
]


async def run_demo(settings: Settings, echo: Callable[[str], None]) -> int:
    """Run the scripted session; returns 0 when every query found something."""
    namespace = f"demo-{uuid.uuid4().hex[:6]}"
    settings = settings.model_copy(update={"namespace": namespace})
    echo(
        f"namespace {namespace} on "
        f"{'the embedded server' if settings.embedded else settings.redis_url}"
    )
    async with AsyncMemoryClient(settings) as client:
        worker = Worker(settings, name="demo-worker")
        task = asyncio.create_task(worker.run_async())
        try:
            echo("\n== writes (each returns at once; the worker filters and indexes)")
            for agent, text in SCRIPT:
                receipt = await client.write(
                    text, agent_id=agent, session_id="demo", wait=True, timeout_s=120
                )
                verdict = receipt.status
                if receipt.reason:
                    verdict += f": {explain_reason(receipt.reason)}"
                if receipt.merged_into:
                    verdict += f" into {receipt.merged_into[:8]}"
                if receipt.conflicts_with:
                    verdict += (
                        f", conflicts with {', '.join(m[:8] for m in receipt.conflicts_with)}"
                    )
                record = await client.get(receipt.id) if receipt.status == "indexed" else None
                if record is not None and record.original:
                    verdict += f", summarized to {len(record.content)} chars"
                echo(f"  [{agent:>7}] {fit(text, 50)}  {verdict}")
            echo("\n== searches")
            found_all = True
            for agent, query, mode in QUERIES:
                hits = await client.search(query, top_k=2, mode=mode)  # type: ignore[arg-type]
                found_all &= bool(hits)
                echo(f"  [{agent:>7}] {mode:>7} {query!r}")
                for hit in hits:
                    echo(f"            {hit.fused:.3f}  {snippet(hit.content, 70)}")
            stats = await client.stats()
            dropped = dict(stats["dropped"])
            total = dropped.pop("total", 0)
            why = "; ".join(f"{n} {explain_reason(code)}" for code, n in sorted(dropped.items()))
            echo(
                f"\n== stats: accepted {stats['accepted']}, indexed {stats['indexed']}, "
                f"merged {stats['merged']}, dropped {total} ({why})"
            )
        finally:
            worker.stop()
            await task
    # Once the client is closed: it sends the searches' hit counts as it closes.
    async with AsyncMemoryClient(settings) as cleaner:
        removed = await delete_namespace(cleaner.redis, cleaner.keys)
    echo(f"\nremoved the demo's namespace {namespace} ({removed} keys and its index)")
    if settings.embedded:
        echo(
            f"the embedded server keeps running (data in {settings.server_dir}); "
            "`hindsight-redis server stop` stops it"
        )
    return 0 if found_all else 1
