"""``erase`` and ``audit`` as an operator runs them: real processes on the session's Redis."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from hindsight_redis import MemoryClient, Settings, Worker

ALICE = "Alice Quimby's locker code at the Harbour gym is 4471"
BOB = "Bob Ferreira books the Harbour gym court on Mondays"


def _run(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **settings.to_env(), "HINDSIGHT_AGENT_ID": "dpo"}
    done = subprocess.run(
        [sys.executable, "-m", "hindsight_redis.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_erase_prints_a_receipt_and_audit_lists_it(settings: Settings) -> None:
    with MemoryClient(settings) as client:
        alice = client.write(ALICE, tags=["user:alice"], agent_id="front-desk")
        bob = client.write(BOB, tags=["user:bob"], agent_id="front-desk")
        Worker(settings).run(burst=True)

    preview = _run(settings, "erase", "--tag", "user:alice", "--dry-run").stdout
    assert (
        preview.startswith("dry run: ")
        and "would erase 1 write(s) named by tag user:alice" in preview
    )
    assert "memories" in preview and "asked by dpo (settings)" in preview
    receipt = json.loads(_run(settings, "erase", "--tag", "user:alice", "--json").stdout)
    assert receipt["ids"] == [alice.id] and receipt["erased"]["memories"] == 1
    assert (receipt["by"], receipt["how"], receipt["dry_run"]) == ("dpo", "settings", False)
    assert receipt["audit_id"] and ALICE not in json.dumps(receipt)

    table = _run(settings, "audit").stdout
    lines = table.splitlines()
    assert lines[0].startswith("when (UTC)") and " erase " in lines[1] and "dpo" in lines[1]
    assert any(" write " in line and "front-desk" in line for line in lines)
    entries = json.loads(_run(settings, "audit", "--action", "erase", "--json").stdout)
    assert [(e["by"], e["ids"], e["digest"]) for e in entries] == [
        ("dpo", [alice.id], receipt["digest"])
    ]
    assert _run(settings, "audit", "--since", "2999-01-01").stdout.strip() == "no audit entry"
    with MemoryClient(settings) as client:
        assert client.get(alice.id) is None
        assert [h.id for h in client.search("Harbour gym", mode="keyword")] == [bob.id]
