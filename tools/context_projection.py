"""Builds the contextual vectors' PCA basis (``--write``), and checks the one shipped.

The basis goes to ``hindsight_redis/providers/minilm/pca_basis.npy``.

The contextual model (MiniLM, 384 dims) spreads most of its vectors' energy
over far fewer directions. An index may store each contextual vector
projected on the first ``k`` principal directions of such vectors (and
renormalised), query vectors projected the same way: ``k / 384`` of the
bytes in every hash and in the HNSW graph, and of the bytes a search leg
returns per candidate.

This script fits the basis the package ships
(``hindsight_redis/providers/minilm/pca_basis.npy``: all 384 directions,
strongest first, so any ``k`` takes the first ``k`` columns) on

* the 5 LoCoMo dev conversations' first 3 (the recall benchmarks' dev split),
  each turn embedded with its two previous turns as the refiner embeds a
  memory written with ``context``, and
* the synthetic assistant log of seed 0 (``benchmarks.assistant_log.data.generate(0)``),
* the paragraphs of the docstrings of Python's standard library (its top-level
  modules: technical prose, so the basis is not a chat-only one),

each set weighing the same (a basis fitted on the texts by their count,
two thirds docstrings, cost 0.006 of LoCoMo dev recall@10; on the
LoCoMo dev turns alone it kept less of the other sets' energy),

and reports the share of the vectors' energy each ``k`` keeps on texts the
fit did not see: LoCoMo's held-out conversations, the assistant log of seed
1, and this package's docstrings (technical prose the fit did not see).
The basis is uncentred (the SVD of the vectors themselves, not of their
deviations from the mean): cosines between projected vectors stay close to
the model's, so the contextual relevance floor keeps its meaning.

Run:  python tools/context_projection.py            # check the shipped basis
      python tools/context_projection.py --write    # refit it and write it
"""

from __future__ import annotations

import argparse
import ast
import sys
import sysconfig
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: benchmarks

from benchmarks import locomo
from benchmarks.assistant_log.data import generate
from benchmarks.recall import CONTEXT_TURNS
from hindsight_redis.core.context import contextual_text
from hindsight_redis.providers.contextual import MiniLMEmbedder
from hindsight_redis.providers.projection import BASIS_PATH
from hindsight_redis.write.session_tails import SessionTails

PACKAGE = Path(__file__).resolve().parent.parent / "hindsight_redis"
KS = (128, 192, 256, 320)


def with_context(rows: list[tuple[str, str]]) -> list[str]:
    """(session, content) rows as the refiner embeds them: each with its two previous turns."""
    items = SessionTails().fill(
        [{"content": content, "session_id": session} for session, content in rows],
        CONTEXT_TURNS,
        "",
    )[0]
    return [
        contextual_text(content, item.get("context"))
        for (_, content), item in zip(rows, items, strict=True)
    ]


def locomo_texts(held_out: bool) -> list[str]:
    """LoCoMo turns of the dev (0-2) or held-out (3-4) conversations, with context."""
    data = locomo.load()
    chosen = data[locomo.HELD_OUT + 1 :] if held_out else data[: locomo.HELD_OUT + 1]
    return with_context([(t.conversation, t.content) for t in locomo.turns(chosen)])


def assistant_texts(seed: int) -> list[str]:
    """The synthetic assistant log's turns, with context."""
    return with_context([(t.session, t.text) for t in generate(seed).turns])


def docstrings(paths: list[Path]) -> list[str]:
    """The paragraphs (over 40 characters) of the docstrings in ``paths``."""
    out: list[str] = []
    for path in paths:
        try:
            tree = ast.parse(path.read_text())
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                if doc:
                    out += [" ".join(p.split()) for p in doc.split("\n\n") if len(p) > 40]
    return out


def energy_kept(vectors: np.ndarray, basis: np.ndarray, k: int) -> float:
    """The mean share of each unit vector's squared length kept by the first ``k`` directions."""
    return float(((vectors @ basis[:, :k]) ** 2).sum(axis=1).mean())


def main() -> None:
    """Fit (with --write) or load the basis, and print the energy kept per k on unseen texts."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", action="store_true", help="refit the basis and write it")
    args = parser.parse_args()
    model = MiniLMEmbedder()
    if args.write:
        stdlib = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))
        parts = [locomo_texts(held_out=False), assistant_texts(0), docstrings(stdlib)]
        # Each set weighs the same, whatever its size (the docstrings are the most).
        fit = np.concatenate(
            [model.embed_sync(texts).astype(np.float64) / np.sqrt(len(texts)) for texts in parts]
        )
        _, _, vt = np.linalg.svd(fit, full_matrices=False)
        basis = vt.T.astype(np.float32)  # columns: directions, strongest first
        np.save(BASIS_PATH, basis)
        sizes = " + ".join(f"{len(texts):,}" for texts in parts)
        print(f"fitted on {sizes} texts, each set weighing the same; wrote {BASIS_PATH}")
    basis = np.load(BASIS_PATH)
    sets = {
        "LoCoMo held-out (3-4)": locomo_texts(held_out=True),
        "assistant log, seed 1": assistant_texts(1),
        "this package's docstrings": docstrings(sorted(PACKAGE.rglob("*.py"))),
    }
    print("\n| texts (not in the fit) | n | " + " | ".join(f"k={k}" for k in KS) + " |")
    print("|---|---:|" + "---:|" * len(KS))
    for name, texts in sets.items():
        vectors = model.embed_sync(texts)
        kept = " | ".join(f"{energy_kept(vectors, basis, k):.3f}" for k in KS)
        print(f"| {name} | {len(texts):,} | {kept} |")


if __name__ == "__main__":
    main()
