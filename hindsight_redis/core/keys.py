"""Every Redis key, stream, group and index name, from one prefix.

Pure module. All keys of a namespace share the hash tag ``{namespace}`` so
that a namespace lives on one cluster slot and scripts may touch any of them;
so do its index names (the search module routes FT.* by the index name).
Cross-namespace keys (the registry, tokens) are read one key per command.
"""

from __future__ import annotations

from dataclasses import dataclass

GROUP = "workers"


def glob_escape(value: str) -> str:
    """``value`` with the glob characters of ``SCAN MATCH`` escaped."""
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in value)


@dataclass(frozen=True, slots=True)
class Keys:
    """Key names for one ``(prefix, namespace)`` pair."""

    prefix: str
    namespace: str

    @property
    def base(self) -> str:
        """Common start of every key of this namespace."""
        return f"{self.prefix}:{{{self.namespace}}}"

    @property
    def pattern(self) -> str:
        """``SCAN MATCH`` pattern of every key of this namespace."""
        return glob_escape(self.base) + ":*"

    def pattern_of(self, kind: str) -> str:
        """``SCAN MATCH`` pattern of the namespace's keys of one kind (``content``: the
        content claims, ``outcome``...)."""
        return f"{glob_escape(self.base)}:{glob_escape(kind)}:*"

    @property
    def stream(self) -> str:
        """The write stream workers consume."""
        return f"{self.base}:stream"

    @property
    def group(self) -> str:
        """The consumer group of the workers."""
        return GROUP

    @property
    def dead_letters(self) -> str:
        """Stream of entries that failed ``max_deliveries`` times."""
        return f"{self.base}:dlq"

    @property
    def recent_drops(self) -> str:
        """Short capped stream of recent filter drops, for debugging."""
        return f"{self.base}:drops"

    @property
    def stats(self) -> str:
        """Hash of counters: accepted, processed, indexed, dropped:<reason>..."""
        return f"{self.base}:stats"

    @property
    def errors(self) -> str:
        """Hash of the last error per pending stream entry id."""
        return f"{self.base}:errors"

    @property
    def doc_prefix(self) -> str:
        """Prefix of the memory hashes the search index covers."""
        return f"{self.base}:mem:"

    def doc(self, memory_id: str) -> str:
        """The hash holding one memory."""
        return f"{self.doc_prefix}{memory_id}"

    def outcome(self, event_id: str) -> str:
        """What became of one write (indexed, merged, dropped); also the redelivery guard."""
        return f"{self.base}:outcome:{event_id}"

    def idempotency(self, event_id: str) -> str:
        """Marks an idempotency key as used; holds the first receipt's stream id."""
        return f"{self.base}:idem:{event_id}"

    def notify(self, event_id: str) -> str:
        """List a ``wait=True`` writer blocks on until its write is processed."""
        return f"{self.base}:notify:{event_id}"

    def content_claim(self, digest: str) -> str:
        """Which memory holds a text (``rules.content_key``): exact twins merge into it.

        Expires with the outcomes (``outcome_ttl_s``): it settles two workers indexing one
        text at once; a twin written later meets the memory in the dedup stage's lookup."""
        return f"{self.base}:content:{digest}"

    @property
    def index_alias(self) -> str:
        """The alias searches use; ``reindex`` points it at a new index.

        It carries the hash tag: on a cluster, FT.* commands go to the shard of the
        index name, which must be the shard holding the namespace's memories."""
        return f"{self.base}:idx"

    def index_name(self, generation: int) -> str:
        """The concrete index of one generation (bumped by ``reindex``)."""
        return f"{self.index_alias}:g{generation}"

    @property
    def legacy_index_alias(self) -> str:
        """The alias of releases before 0.2 (no hash tag): ``MemoryIndex.ensure`` adopts
        an index found under it."""
        return f"{self.prefix}-{self.namespace}-idx"

    def is_index(self, name: str) -> bool:
        """Whether ``name`` is an index of this namespace, of any generation or release."""
        return name.startswith((f"{self.index_alias}:g", f"{self.legacy_index_alias}-g"))

    @property
    def index_meta(self) -> str:
        """Hash recording the live index: generation, embedding model, dims."""
        return f"{self.base}:index"

    @property
    def data_format(self) -> str:
        """Hash of the namespace's data format (``index.upgrade``): its version, and when each
        upgrade step ran."""
        return f"{self.base}:format"

    @property
    def access_log(self) -> str:
        """Hash of pending access-count increments, flushed in batches."""
        return f"{self.base}:access"

    @property
    def merge_log(self) -> str:
        """Hash of the sources of writes merged into a memory, folded into its hash with
        the access log (a write to the memory's hash re-indexes it)."""
        return f"{self.base}:merges"

    def refine_claim(self, memory_id: str) -> str:
        """Short-lived claim of a memory by one refiner (expires on its own)."""
        return f"{self.base}:refining:{memory_id}"

    @property
    def sweep_lease(self) -> str:
        """Held by the one sweeper of the namespace (expires unless renewed)."""
        return f"{self.base}:sweep-lease"

    def llm_spend(self, day: str) -> str:
        """Hash of the namespace's LLM spend over one UTC day (``YYYY-MM-DD``)."""
        return f"{self.base}:llm-spend:{day}"

    @property
    def llm_spend_total(self) -> str:
        """Hash of the namespace's LLM spend over all time (the metrics' counters)."""
        return f"{self.base}:llm-spend:total"

    @property
    def index_latency(self) -> str:
        """Hash of the write-to-searchable histogram (``core.histogram``): bucket -> count, sum."""
        return f"{self.base}:index-latency"

    @property
    def resolutions(self) -> str:
        """Capped stream recording every conflict resolution (and its undoing): who, when, why."""
        return f"{self.base}:resolutions"

    @property
    def audit(self) -> str:
        """Stream of the namespace's audit trail (``trust.audit``): ids and digests, no content."""
        return f"{self.base}:audit"

    @property
    def held(self) -> str:
        """Hash of the writes held for review (``trust``): memory id -> the held write."""
        return f"{self.base}:held"

    @property
    def erased(self) -> str:
        """Set of the memory ids erased (``trust.erasure``): an import never brings them back."""
        return f"{self.base}:erased"

    @property
    def exports(self) -> str:
        """Hash of the export files written (``lifecycle.exports``): path -> when, how many."""
        return f"{self.base}:exports"

    def export_ids(self, path_digest: str) -> str:
        """The ids of the memories one export file holds (compressed), for ``erase`` to name it."""
        return f"{self.base}:export-ids:{path_digest}"

    @property
    def rebuild(self) -> str:
        """Scratch stream an erasure rebuilds a stream into, then renames over it."""
        return f"{self.base}:rebuild"

    def item(self, digest: str) -> str:
        """A keyed item (``items``): a value under a path and key, beside its memory."""
        return f"{self.base}:item:{digest}"

    def items_of(self, path_digest: str) -> str:
        """Sorted set of the keys of one item path, scored by creation time."""
        return f"{self.base}:items:{path_digest}"

    @property
    def item_paths(self) -> str:
        """Hash of every item path (JSON) -> how many items it holds."""
        return f"{self.base}:item-paths"

    @property
    def item_retired(self) -> str:
        """Memory ids of replaced item versions to archive once indexed (written, not yet)."""
        return f"{self.base}:item-retired"

    def conversation(self, session_id: str) -> str:
        """List of one conversation's raw items, oldest first (``client.conversation``)."""
        return f"{self.base}:conversation:{session_id}"


def namespace_registry(prefix: str) -> str:
    """Set of every namespace written under ``prefix`` (added on a client's first write)."""
    return f"{prefix}:namespaces"


def namespace_discovery(prefix: str) -> str:
    """Set once the streams written before the registry existed were added to it (``SCAN``)."""
    return f"{prefix}:namespaces:discovered"


def token_key(prefix: str, token_hash: str) -> str:
    """Hash describing one access token, keyed by the token's SHA-256 (never the token)."""
    return f"{prefix}:token:{token_hash}"


def token_registry(prefix: str) -> str:
    """Hash of token id -> token hash, for ``token list`` and ``token revoke``."""
    return f"{prefix}:tokens"
