"""Screenshots of the console's main pages (the README's), on a throwaway embedded Redis.

Agents write for a while (a worker indexing, some writes dropped, one contradiction)
while the console samples its counters, then headless Chromium (Debian's ``chromium``,
driven by Playwright) takes the pages, ``docs/console-{overview,search,conflicts}.png``::

    python docs/console_screenshots.py --out docs --seconds 40
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: benchmarks

from benchmarks.harness import embedded_redis
from hindsight_redis import AsyncMemoryClient, Settings, Worker
from hindsight_redis.redis.server import free_port
from hindsight_redis.service.console import build_app
from hindsight_redis.service.tokens import create_token

FACTS = [
    "Alice prefers answers in Chinese, with code samples in English",
    "The billing-service-v2 deploy failed with ERR_CONN_RESET; bob rolled it back",
    "Staging runs on eu-west-3 behind the shared load balancer",
    "Carol owns the payments API; page her for anything about refunds",
    "The nightly backup job takes about forty minutes",
    "Dana asked for weekly summaries instead of daily ones",
    "The search team wants latency dashboards split by region",
    "Use poetry for the data pipeline repository, not pip-tools",
    "The onboarding checklist lives in the wiki under People Ops",
    "Erin is allergic to peanuts: no snacks with nuts at the offsite",
    "Frank reviews every change to the authentication middleware",
    "The mobile app crashes when the locale is Turkish (dotless i in keys)",
    "Grace likes terse status updates with links to the tickets",
    "Customer Acme Corp renews in spring and wants SSO before then",
    "Henry moved the design reviews to the small meeting room",
    "Never run the migration script against the read replica",
    "Ivy maintains the terraform modules for the networking stack",
    "The flaky checkout test depends on the system clock",
]
CHATTER = ["ok thanks!", "👍", "sure", "got it, thanks"]


async def activity(settings: Settings, seconds: float) -> None:
    """Agents writing for ``seconds``, a worker indexing, one contradiction at the end."""
    worker = Worker(settings, name="shots-worker")
    running = asyncio.create_task(worker.run_async())
    async with AsyncMemoryClient(settings) as client:
        end = time.monotonic() + seconds
        n = 0
        while time.monotonic() < end:
            for _ in range(random.randint(1, 5)):
                n += 1
                agent = random.choice(["planner", "coder", "support"])
                # Each agent notes each fact once (near-duplicates across agents merge).
                text = random.choice(CHATTER) if n % 4 == 0 else f"{FACTS[n % len(FACTS)]}"
                if n % 4 and n >= len(FACTS):
                    text = f"As {agent} heard: {text.lower()}"
                await client.write(text, agent_id=agent)
            await asyncio.sleep(random.uniform(0.4, 1.5))
        await client.write(
            "The deploy window for billing is Tuesday 14:00", agent_id="ops", wait=True
        )
        await client.write(
            "The deploy window for billing is Thursday 14:00", agent_id="coder", wait=True
        )
    worker.stop()
    await running


def main() -> None:
    """Run the session, then take the screenshots."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs"))
    parser.add_argument("--seconds", type=float, default=40.0)
    args = parser.parse_args()
    with embedded_redis() as url:
        settings = Settings(
            redis_url=url, namespace="team-a", embedder="local", contextual_embedder="none"
        )

        async def token() -> str:
            async with AsyncMemoryClient(settings) as client:
                made, _ = await create_token(
                    client.redis,
                    settings.key_prefix,
                    namespace="team-a",
                    agent_id="ops",
                    scope="admin",
                )
                return made

        port = free_port()
        app = build_app(settings, admin_token=asyncio.run(token()), sample_s=1.0)
        server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        asyncio.run(activity(settings, args.seconds))
        args.out.mkdir(parents=True, exist_ok=True)
        base = f"http://127.0.0.1:{port}"
        with sync_playwright() as driver:
            browser = driver.chromium.launch(
                executable_path=shutil.which("chromium"),
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            for name, path in (
                ("overview", "/ns/team-a"),
                ("search", "/ns/team-a/memories?q=who+owns+refunds%3F&mode=hybrid"),
                ("conflicts", "/ns/team-a/conflicts"),
            ):
                page.goto(base + path)
                page.screenshot(path=str(args.out / f"console-{name}.png"))
                print(f"wrote {args.out / f'console-{name}.png'}")
            browser.close()
        server.should_exit = True


if __name__ == "__main__":
    main()
