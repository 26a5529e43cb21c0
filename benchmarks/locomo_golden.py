"""A golden file for ``hindsight-redis eval`` made from the LoCoMo dev file.

    python -m benchmarks.locomo_golden --out locomo.jsonl [--conversations N]

Not a member of the suite: it writes the questions the ``recall`` benchmark asks, as
``eval`` reads them, so that ``eval`` on a pool ``recall`` wrote (turns written with their
``dia_id`` as ``source`` and the conversation as ``session_id``) reports the benchmark's
recall. Each line: the question, the cited turns as ``relevant_sources``, the conversation
as the ``session_id`` filter, and its category and dev / held-out group as ``tags``.
Standard library only, as ``locomo`` is.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks import locomo


def golden_lines(questions: Iterable[locomo.Question]) -> list[dict[str, Any]]:
    """The golden lines of LoCoMo's scored questions."""
    return [
        {
            "query": q.text,
            "relevant_sources": sorted(q.evidence),
            "filters": {"session_id": q.conversation},
            "tags": [locomo.CATEGORIES[q.category], "held_out" if q.held_out else "dev"],
        }
        for q in questions
    ]


def write_golden(out: Path, conversations: int | None = None) -> int:
    """Write the golden file of the first ``conversations`` (default all); its line count."""
    lines = golden_lines(locomo.questions(locomo.load()[:conversations]))
    with out.open("w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    return len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.locomo_golden")
    parser.add_argument("--out", type=Path, required=True, help="the golden file to write")
    parser.add_argument("--conversations", type=int, help="the first N (default all)")
    args = parser.parse_args()
    count = write_golden(args.out, args.conversations)
    print(f"{count} questions written to {args.out}")


if __name__ == "__main__":
    main()
