"""A conversation's raw items, in order: what a chat framework's session replays to its model.

Separate from the memories: an item is kept exactly as given (JSON) and in
order, never filtered, summarized or merged, and it is not searchable. One
Redis list per conversation (``Keys.conversation``), under the namespace's
hash tag, so it sits in the namespace's cluster slot. ``integrations.openai_agents``
builds its ``Session`` on it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hindsight_redis.client.async_client import AsyncMemoryClient
from hindsight_redis.errors import InvalidArgument, redis_errors


class Conversation:
    """The items of one conversation (``session_id``) of the client's namespace.

    ``ttl_s``: the whole conversation expires that long after its last
    addition (none by default: it lasts until ``clear``).
    """

    def __init__(
        self, client: AsyncMemoryClient, session_id: str, *, ttl_s: int | None = None
    ) -> None:
        if not session_id:
            raise InvalidArgument("a conversation needs a session_id")
        if ttl_s is not None and ttl_s <= 0:
            raise InvalidArgument(f"ttl_s must be positive, not {ttl_s}")
        self.client = client
        self.session_id = session_id
        self.ttl_s = ttl_s
        self.key = client.keys.conversation(session_id)

    async def items(self, limit: int | None = None) -> list[Any]:
        """The items, oldest first; with ``limit``, the last ``limit`` of them."""
        if limit is not None and limit <= 0:
            return []
        redis = await self.client.connect()
        with redis_errors("read the conversation"):
            raw = await redis.lrange(self.key, -limit if limit else 0, -1)
        return [json.loads(r) for r in raw]

    async def add(self, items: Sequence[Any]) -> None:
        """Append items (JSON values), in one round trip."""
        if not items:
            return
        encoded = [json.dumps(i, ensure_ascii=False, separators=(",", ":")) for i in items]
        redis = await self.client.connect()
        with redis_errors("add to the conversation"):
            async with redis.pipeline(transaction=True) as pipe:
                pipe.rpush(self.key, *encoded)
                if self.ttl_s is not None:
                    pipe.expire(self.key, self.ttl_s)
                await pipe.execute()

    async def pop(self) -> Any | None:
        """Remove and return the newest item (``None`` when empty)."""
        redis = await self.client.connect()
        with redis_errors("pop from the conversation"):
            raw: Any = await redis.rpop(self.key)  # one item: no count given
        return None if raw is None else json.loads(raw)

    async def clear(self) -> None:
        """Remove every item."""
        redis = await self.client.connect()
        with redis_errors("clear the conversation"):
            await redis.delete(self.key)
