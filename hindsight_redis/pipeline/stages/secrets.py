"""The workers' look for secrets: what a writer that bypassed the client put on the stream.

The client screens every write before it reaches the stream (``trust.edge``), so
this finds nothing in what a client wrote; it is the defense in depth for entries
appended by other means (a raw ``XADD``, an older client, a client set to ``keep``
feeding workers set otherwise). First in the pipeline, whether or not the filters
are enabled, under the workers' ``secrets`` setting:

* ``mask``: the candidate's event (content, context, source, tags) is masked before
  any other stage reads it, so the memory, its outcome and the recent drops hold
  placeholders (counted ``secrets:masked``);
* ``drop``: masked the same way (its outcome keeps the masked text), then dropped
  with reason ``secret``;
* ``hold``: the event gets ``hold = secret:<kinds>``, as the write edge sets it, and
  the workers hold it for review as written;
* ``keep``: no stage.

The stream entry itself is not rewritten (a stream entry cannot be, and the AOF and
the replicas have it already): it stays until the stream is trimmed
(``stream_keep_acked``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hindsight_redis.pipeline.stages.base import Candidate, Stage
from hindsight_redis.settings import TrustSettings
from hindsight_redis.trust.edge import SECRET_REASON, SecretPolicy
from hindsight_redis.trust.secrets import might_hold_secrets, scan_event, secret_reason


class SecretStage:
    """Masks, drops or holds the candidates whose writes hold secrets (``policy``)."""

    name = "secrets"

    def __init__(self, policy: SecretPolicy) -> None:
        self.policy = policy

    async def process(self, batch: Sequence[Candidate]) -> None:
        """Screen the candidates of ``batch`` that no stage dropped yet."""
        live = [c for c in batch if not c.dropped and c.event.hold is None]
        suspects = set(might_hold_secrets([c.event.content for c in live]))
        suspects.update(
            n for n, c in enumerate(live) if c.event.context or c.event.source or c.event.tags
        )
        for n in sorted(suspects):
            self._screen(live[n])

    def _screen(self, candidate: Candidate) -> None:
        masked, kinds = scan_event(candidate.event)
        if not kinds:
            return
        if self.policy == "hold":
            if candidate.event.reviewed:  # a person approved it as written
                return
            candidate.event = dataclasses.replace(candidate.event, hold=secret_reason(kinds))
            return
        candidate.event = masked
        candidate.content = masked.content
        candidate.count("secrets:masked")
        if self.policy == "drop":
            candidate.drop(SECRET_REASON, ", ".join(kinds))


def secret_stages(trust: TrustSettings) -> list[Stage]:
    """The secrets stage of ``trust.secrets`` (none for ``keep``)."""
    return [] if trust.secrets == "keep" else [SecretStage(trust.secrets)]
