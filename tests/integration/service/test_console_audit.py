"""The console's audit page: the trail, newest first, filtered; the admin's changes in it."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from hindsight_redis import MemoryClient, Settings, Worker
from hindsight_redis.service.console import build_app
from tests.integration.service.test_console import BASE, _admin_token

FACT = "Alice Quimby prefers her invoices in Danish kroner"


def test_the_audit_page_shows_who_did_what_and_no_text(settings: Settings) -> None:
    with MemoryClient(settings) as client:
        kept = client.write(FACT, agent_id="planner", tags=["user:alice"])
        Worker(settings).run(burst=True)
        client.forget(kept.id, as_agent="ops")
    ns = f"/ns/{settings.namespace}"
    with TestClient(build_app(settings, admin_token=_admin_token(settings)), base_url=BASE) as http:
        page = http.get(f"{ns}/memories/{kept.id}").text
        csrf = re.search(r"name='csrf' value='([^']+)'", page)
        assert csrf is not None
        restored = http.post(f"{ns}/restore", data={"memory_id": kept.id, "csrf": csrf.group(1)})
        assert restored.status_code == 200
        with MemoryClient(settings) as client:
            client.erase(tag="user:alice", as_agent="dpo")
        trail = http.get(f"{ns}/audit")
        assert trail.status_code == 200 and "<h2>Audit trail</h2>" in trail.text
        rows = re.findall(r"<tr><td title=.*?</tr>", trail.text)
        actions = [
            re.findall(r"<b>(\w+)</b></td><td>([^<]*)</td><td>([^<]*)</td>", r)[0] for r in rows
        ]
        assert actions == [
            ("erase", "dpo", "argument"),
            ("restore", "ops", "token"),  # the console's admin token
            ("forget", "ops", "argument"),
            ("write", "planner", "argument"),
        ]
        assert FACT not in trail.text and "Quimby" not in trail.text
        only = http.get(f"{ns}/audit", params={"action": "erase", "agent": "dpo"}).text
        assert only.count("<tr><td title=") == 1
        assert "audit</a>" in http.get(ns).text  # linked from every page of the namespace
