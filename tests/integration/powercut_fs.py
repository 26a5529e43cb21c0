"""A FUSE file system that loses what was not fsynced when the power is cut (after LazyFS,
which Jepsen uses): a power-cut simulator for the durability tests.

``python powercut_fs.py BACKING MOUNT REPORT`` mounts ``BACKING`` at ``MOUNT`` (in the
foreground, until ``fusermount3 -u MOUNT``). Data written through the mount is held in
this process's memory, as a kernel holds it in its page cache, and reaches ``BACKING``
only on ``fsync`` / ``fdatasync`` of its file: reads, sizes and ``stat`` see it
meanwhile. Writing anything to ``MOUNT/.powercut`` is the power cut: every unsynced byte
is dropped (``BACKING`` keeps what was synced, nothing more) and ``REPORT`` gets
``{"synced_bytes": ..., "dropped_bytes": ..., "fsyncs": ...}``.

A process killed with ``kill -9`` leaves the page cache alone (the kernel writes it out
later), so a kill alone cannot tell an fsync policy that syncs every write from one that
syncs every second; a kill followed by the power cut can.

Metadata (create, mkdir, rename, unlink, truncate, chmod) goes to ``BACKING`` at once:
it is treated as synced. That is kinder than a real file system (which may lose a rename
not followed by an ``fsync`` of its directory) and only about metadata: Redis fsyncs its
AOF manifest and directory after renames anyway, and the data of a renamed file stays
unsynced until its file is fsynced.
"""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path
from typing import Any

import mfusepy as fuse

CONTROL = "/.powercut"  # a write here cuts the power
_CONTROL_FH = 1 << 40  # the control file's handle (real handles are small fds)


class PowerCutFS(fuse.Operations):  # type: ignore[misc]
    """A passthrough to ``root`` whose file data waits in memory for an fsync."""

    use_ns = True  # times in nanoseconds (floats are deprecated)

    def __init__(self, root: Path, report: Path) -> None:
        self.root = root
        self.report = report
        self.pending: dict[str, list[tuple[int, bytes]]] = {}  # path: unsynced writes
        self.sizes: dict[str, int] = {}  # path: size with its unsynced writes
        self.appending: set[int] = set()  # handles opened with O_APPEND
        self.synced_bytes = 0
        self.fsyncs = 0

    def _real(self, path: str) -> str:
        return str(self.root) + path

    # -- data: held until fsync -------------------------------------------------------

    def _size(self, path: str) -> int:
        if path in self.sizes:
            return self.sizes[path]
        return os.lstat(self._real(path)).st_size

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        if fh == _CONTROL_FH:
            self._cut()
            return len(data)
        if fh in self.appending:  # the kernel's offset is its idea of the size: ours is it
            offset = self._size(path)
        self.pending.setdefault(path, []).append((offset, bytes(data)))
        self.sizes[path] = max(self._size(path), offset + len(data))
        return len(data)

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        end = min(offset + size, self._size(path))
        if end <= offset:
            return b""
        buf = bytearray(os.pread(fh, end - offset, offset).ljust(end - offset, b"\0"))
        for at, data in self.pending.get(path, ()):  # later writes win, as in a cache
            lo, hi = max(at, offset), min(at + len(data), end)
            if lo < hi:
                buf[lo - offset : hi - offset] = data[lo - at : hi - at]
        return bytes(buf)

    def _flush_to_disk(self, path: str, fh: int) -> None:
        for at, data in self.pending.pop(path, ()):
            os.pwrite(fh, data, at)
            self.synced_bytes += len(data)
        self.sizes.pop(path, None)
        os.fsync(fh)
        self.fsyncs += 1

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        self._flush_to_disk(path, fh)
        return 0

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        # Metadata, applied at once: unsynced writes past the new end are cut off.
        kept = [(at, data[: length - at]) for at, data in self.pending.get(path, ()) if at < length]
        if path in self.pending:
            self.pending[path] = kept
            self.sizes[path] = length
        os.truncate(self._real(path), length)
        return 0

    def _cut(self) -> None:
        dropped = sum(len(d) for writes in self.pending.values() for _, d in writes)
        self.pending.clear()
        self.sizes.clear()
        result = {"synced_bytes": self.synced_bytes, "dropped_bytes": dropped}
        self.report.write_text(json.dumps({**result, "fsyncs": self.fsyncs}))

    # -- files and handles ------------------------------------------------------------

    def _opened(self, fh: int, flags: int) -> int:
        if flags & os.O_APPEND:
            self.appending.add(fh)
        return fh

    def open(self, path: str, flags: int) -> int:
        if path == CONTROL:
            return _CONTROL_FH
        if flags & os.O_TRUNC:
            self.truncate(path, 0)
        # O_RDWR: fsync writes the held data through this handle.
        mode = (flags & ~(os.O_ACCMODE | os.O_APPEND | os.O_TRUNC)) | os.O_RDWR
        return self._opened(os.open(self._real(path), mode), flags)

    def create(self, path: str, mode: int, flags: int = os.O_WRONLY) -> int:
        if path == CONTROL:
            return _CONTROL_FH
        self.pending.pop(path, None)
        self.sizes.pop(path, None)
        fd = os.open(self._real(path), os.O_RDWR | os.O_CREAT | os.O_TRUNC, mode)
        return self._opened(fd, flags)

    def release(self, path: str, fh: int) -> int:
        # A close is not an fsync: the held data stays held (and is lost on a cut).
        if fh != _CONTROL_FH:
            self.appending.discard(fh)
            os.close(fh)
        return 0

    def flush(self, path: str, fh: int) -> int:
        return 0

    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        if path == CONTROL:
            return {"st_mode": 0o100600, "st_nlink": 1, "st_size": 0}
        try:
            st = os.lstat(self._real(path))
        except OSError as e:
            raise fuse.FuseOSError(e.errno) from e
        keys = ("st_mode", "st_nlink", "st_uid", "st_gid")
        attrs: dict[str, Any] = {k: getattr(st, k) for k in keys}
        attrs.update(st_atime=st.st_atime_ns, st_mtime=st.st_mtime_ns, st_ctime=st.st_ctime_ns)
        attrs["st_size"] = self.sizes.get(path, st.st_size)
        return attrs

    def rename(self, old: str, new: str) -> int:
        os.rename(self._real(old), self._real(new))
        for table in (self.pending, self.sizes):
            table.pop(new, None)
            if old in table:
                table[new] = table.pop(old)  # type: ignore[index]
        return 0

    def unlink(self, path: str) -> int:
        os.unlink(self._real(path))
        self.pending.pop(path, None)
        self.sizes.pop(path, None)
        return 0

    def mkdir(self, path: str, mode: int) -> int:
        os.mkdir(self._real(path), mode)
        return 0

    def rmdir(self, path: str) -> int:
        os.rmdir(self._real(path))
        return 0

    def readdir(self, path: str, fh: int) -> list[str]:
        return [".", "..", *os.listdir(self._real(path))]

    def chmod(self, path: str, mode: int) -> int:
        os.chmod(self._real(path), mode)
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        return 0

    def access(self, path: str, amode: int) -> int:
        if path != CONTROL and not os.access(self._real(path), amode):
            raise fuse.FuseOSError(errno.EACCES)
        return 0

    def fsyncdir(self, path: str, datasync: int, fh: int) -> int:
        return 0  # metadata is synced already (see the module's docstring)

    def statfs(self, path: str) -> dict[str, int]:
        st = os.statvfs(self._real(path))
        keys = ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree")
        return {k: getattr(st, k) for k in (*keys, "f_namemax")}


def main() -> None:
    """Mount ``argv[1]`` at ``argv[2]`` in the foreground, reporting to ``argv[3]``."""
    backing, mount, report = (Path(a).resolve() for a in sys.argv[1:4])
    fuse.FUSE(PowerCutFS(backing, report), str(mount), foreground=True, nothreads=True)


if __name__ == "__main__":
    main()
