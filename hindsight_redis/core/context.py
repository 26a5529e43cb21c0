"""A memory's neighbourhood: the ``context`` its contextual vector is embedded with.

Pure module: no I/O. A write may carry a ``context`` (e.g. the previous turn
of the conversation); the refiner embeds ``contextual_text(content,
context)`` with the contextual model, while the static vector and BM25 stay
on the memory's own text. ``write_many(..., context_from_previous=N)`` fills
it from the ``N`` previous items of the same session (``write.session_tails``).

What is stored and embedded is the last ``CONTEXT_KEPT_BYTES`` of it (UTF-8):
a memory hash stays a compact listpack only while every value fits
``hash-max-listpack-value`` (1024 bytes), and the contextual vector is a mean
over word pieces, so a context many times longer than the memory would
outweigh it (on LoCoMo three previous turns already found less than two).
The end is kept because it is nearest to the memory.
"""

from __future__ import annotations

MAX_CONTEXT_CHARS = 4_000
"""The longest ``context`` a write may give (characters); what is kept is shorter."""
CONTEXT_KEPT_BYTES = 600
"""How much of a context is stored and embedded: its last 600 bytes (UTF-8), about four
conversational turns or 130 word pieces (MiniLM reads 256)."""
_WORD_CUT_CHARS = 32  # a cut inside a word drops that word's rest when a space is this near


def kept_context(text: str) -> str:
    """The part of a context that is stored and embedded: its last ``CONTEXT_KEPT_BYTES``.

    Cut at a character boundary, then past the first space when the cut fell
    inside a word (and a space is near), so the model does not read a word's stub.
    """
    text = text.strip()
    raw = text.encode("utf-8")
    if len(raw) <= CONTEXT_KEPT_BYTES:
        return text
    tail = raw[-CONTEXT_KEPT_BYTES:].decode("utf-8", "ignore")  # drops a split character
    space = tail.find(" ", 0, _WORD_CUT_CHARS)
    if space >= 0 and not text[len(text) - len(tail) - 1].isspace():
        tail = tail[space + 1 :]
    return tail.strip()


def contextual_text(content: str, context: str | None) -> str:
    """What the contextual model embeds for a memory: its content, a space, its context.

    Content first: MiniLM drops what passes its window from the end, so a long
    context never pushes the memory's own text out (and on LoCoMo this order
    found more: docs/decisions.md, "Contextual vectors read the two previous turns").
    """
    return f"{content} {context}" if context else content
