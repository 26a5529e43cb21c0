"""A power cut under writers: ``durable`` loses no acknowledged write, ``balanced`` at
most about a second's worth.

A ``kill -9`` of Redis leaves the kernel's page cache alone, so it cannot tell the
profiles apart (``test_crashes``). Here the embedded Redis keeps its data on a FUSE file
system (``tests/integration/powercut_fs.py``) that holds every written byte in memory
until an fsync of its file: Redis is killed mid-writes, then everything unsynced is
dropped (the power cut), then Redis restarts on what reached the disk, and the
acknowledged writes it lost are counted.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from hindsight_redis import AsyncMemoryClient, RedisUnavailable, Settings, WriteReceipt
from hindsight_redis.core.resp import as_text
from hindsight_redis.redis.server import EmbeddedServer, get_profile
from tests.integration.helpers import wait_pid_gone

FS = Path(__file__).parents[1] / "powercut_fs.py"
_WRITERS = 4  # concurrent writers on one client
_WRITE_S = 4.0  # of writes before the kill: more than the 2.5 s balanced may lose


@contextmanager
def _powercut_mount(tmp_path: Path) -> Iterator[tuple[Path, Path, Callable[[], Any]]]:
    """``(disk, mount, cut)``: ``mount`` shows ``disk`` through the power-cut file system;
    ``cut()`` drops what was not fsynced and returns the file system's report."""
    if shutil.which("fusermount3") is None or not os.path.exists("/dev/fuse"):
        pytest.fail("the power-cut test needs FUSE: apt-get install fuse3 (.ci/run installs it)")
    disk, mount, report = tmp_path / "disk", tmp_path / "mnt", tmp_path / "report.json"
    disk.mkdir()
    mount.mkdir()
    log = (tmp_path / "fs.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, str(FS), str(disk), str(mount), str(report)], stdout=log, stderr=log
    )
    deadline = time.monotonic() + 20
    while not os.path.ismount(mount):
        assert proc.poll() is None, (tmp_path / "fs.log").read_text()
        assert time.monotonic() < deadline, "the power-cut file system did not mount"
        time.sleep(0.05)

    def cut() -> Any:
        (mount / ".powercut").write_text("cut")
        return json.loads(report.read_text())

    try:
        yield disk, mount, cut
    finally:
        subprocess.run(["fusermount3", "-u", "-z", str(mount)], check=False)
        try:
            proc.wait(10)
        finally:
            proc.kill()
            log.close()


async def _write_until_refused(
    client: AsyncMemoryClient, acked: list[tuple[float, WriteReceipt]]
) -> None:
    """Single writes until Redis is gone, each acknowledged one into ``acked`` with the
    time of its acknowledgement."""
    n = 0
    while True:
        try:
            receipt = await client.write(f"Deploy {n} of service-{n % 97} finished at step {n}")
        except RedisUnavailable:
            return
        acked.append((time.monotonic(), receipt))
        n += 1


@pytest.mark.parametrize("profile", ["durable", "balanced"])
async def test_a_power_cut_loses_no_durable_write_and_at_most_a_second_of_balanced(
    tmp_path: Path, profile: str
) -> None:
    with _powercut_mount(tmp_path) as (disk, mount, cut):
        server = EmbeddedServer(mount, get_profile(profile), port=0)
        state = server.start()
        try:
            settings = Settings(
                redis_url=state.url,
                key_prefix="cut",
                profile=profile,
                embedder="hash",
                server_dir=tmp_path / "unused",
            )
            acked: list[tuple[float, WriteReceipt]] = []
            async with AsyncMemoryClient(settings) as client:
                writers = [
                    asyncio.create_task(_write_until_refused(client, acked))
                    for _ in range(_WRITERS)
                ]
                await asyncio.sleep(_WRITE_S)
                os.kill(state.pid, signal.SIGKILL)  # writes in flight, nothing saved
                killed_at = time.monotonic()
                await asyncio.wait_for(asyncio.gather(*writers), 30)
            wait_pid_gone(state.pid)
        except BaseException:
            server.stop()
            raise
        report = cut()
    server = EmbeddedServer(disk, get_profile(profile), port=0)
    state = server.start()  # on what reached the disk: Redis replays its AOF
    try:
        async with AsyncMemoryClient(
            settings.model_copy(update={"redis_url": state.url})
        ) as client:
            stored = {as_text(i) for i, _ in await client.redis.xrange(client.keys.stream)}
    finally:
        server.stop()
    lost = [(at, r) for at, r in acked if r.stream_id not in stored]
    rate = len(acked) / _WRITE_S
    oldest_lost = max((killed_at - at for at, _ in lost), default=0.0)
    print(
        f"\nPOWER CUT profile={profile} acknowledged={len(acked)} (~{rate:.0f}/s) "
        f"lost={len(lost)} (acknowledged up to {oldest_lost:.2f}s before the kill) fs={report}"
    )
    assert len(acked) >= 50  # enough writes to see a difference
    if profile == "durable":
        assert lost == []
    else:
        # The cut really drops data: balanced (fsync every second) loses the writes since
        # its last fsync...
        assert report["dropped_bytes"] > 0 and lost, report
        # ...and only those: everysec may hold a write(2) back up to 2 s behind a slow
        # fsync, so "about a second" is at most 2.5 s of acknowledgements before the kill
        # (of the 4 s of writes: the older ones must all be there).
        assert acked[0][0] < killed_at - 2.5
        assert oldest_lost < 2.5, oldest_lost
