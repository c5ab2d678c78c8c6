"""One writer per output directory: a lock file holding the writer's pid.

``rageval suite``, ``rageval rescore`` and ``rageval report`` write into a run
directory; two of them at once would mix their files (records of one suite, the
manifest of the other).  :class:`OutDirLock` makes the driving process the only
writer: it creates ``<dir>/.rageval.lock``, takes an exclusive ``flock`` on it
(released by the kernel when the process ends, however it ends) and writes its
pid, host, command and start time into it.

* A second process on the same directory is refused at once with
  :class:`OutDirBusy`, naming the holder's pid and command.
* A lock left by a process that is gone (killed with SIGKILL, a crash) is taken
  over, with a one-line warning on the ``rageval`` logger naming the old pid.
* Inside one process the lock is re-entrant (the report a run builds takes it
  again); it is released, and the file removed, when the outermost holder leaves.

Where ``flock`` is not supported (some network file systems) the pid alone
decides: a lock whose pid is alive on this host refuses, any other is taken over.

>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> with OutDirLock(d, "doctest") as lock:
...     print(lock.path.name, lock.path.exists())
.rageval.lock True
"""

from __future__ import annotations

import ctypes
import errno
import functools
import inspect
import json
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rageval.errors import RunFailure

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["LOCK_NAME", "OutDirBusy", "OutDirLock", "child_of_lock_holder", "holds_out_dir", "read_lock"]

LOCK_NAME = ".rageval.lock"
log = logging.getLogger("rageval")

_HELD: dict[str, list[Any]] = {}  # realpath of the directory -> [fd, depth]
_GUARD = threading.Lock()

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows: the pid check alone
    fcntl = None  # type: ignore[assignment]


class OutDirBusy(RunFailure):
    """Another live process holds the output directory's lock."""


def read_lock(path: Path) -> dict[str, Any]:
    """The holder recorded in a lock file (``{}`` when empty or unreadable)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _alive(pid: Any) -> bool:
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _describe(info: dict[str, Any]) -> str:
    pid = info.get("pid", "?")
    cmd = info.get("command") or "rageval"
    since = info.get("started")
    when = f", started {since}" if since else ""
    host = info.get("host")
    where = f" on {host}" if host and host != socket.gethostname() else ""
    return f"process {pid}{where} ({cmd}{when})"


def child_of_lock_holder(parent: int | None = None) -> None:
    """In a process forked from a lock holder (the report's figure workers): let go of every inherited lock and die
    with the parent.

    A forked child shares the parent's open lock files, so while it lives the ``flock`` it inherited stays held:
    a parent killed with SIGKILL would leave children that keep its run directory locked for good.  The child
    closes its copies (the parent's own are untouched) and, on Linux, asks to be killed when its parent dies
    (``parent``: the parent's pid, taken before the fork; a child whose parent is already gone exits).
    """
    with _GUARD:
        for fd, _ in _HELD.values():
            try:
                os.close(fd)
            except OSError:
                pass
        _HELD.clear()
    _die_with_parent(os.getppid() if parent is None else parent)


def _die_with_parent(parent: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux: the lock files are closed all the same
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


class OutDirLock:
    """The lock of one output directory (see the module doc); a context manager."""

    def __init__(self, directory: str | os.PathLike[str], command: str = "rageval"):
        self.dir = Path(directory)
        self.path = self.dir / LOCK_NAME
        self.command = command
        self._key: str | None = None

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> OutDirLock:
        self.dir.mkdir(parents=True, exist_ok=True)
        key = os.path.realpath(self.dir)
        with _GUARD:
            if key in _HELD:
                _HELD[key][1] += 1
                self._key = key
                return self
            fd = self._take()
            _HELD[key] = [fd, 1]
            self._key = key
        return self

    def release(self) -> None:
        if self._key is None:
            return
        with _GUARD:
            entry = _HELD.get(self._key)
            self._key, key = None, self._key
            if entry is None:
                return
            entry[1] -= 1
            if entry[1] > 0:
                return
            assert key is not None  # the entry was found under it
            del _HELD[key]
            fd = entry[0]
            try:
                os.unlink(self.path)  # still holding the flock: nobody else can be between take and write
            except FileNotFoundError:
                pass
            finally:
                os.close(fd)

    # -- internals
    def _open(self) -> int:
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            return os.open(self.path, flags, 0o666)
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise RunFailure(
                    f"{self.path} is a symbolic link; remove it (rageval never writes through a link in a run directory)"
                ) from None
            raise

    def _take(self) -> int:
        for _ in range(20):  # retried only when the file was replaced between open and flock
            fd = self._open()
            try:
                flocked = self._flock(fd)
                if not flocked:  # no flock here: the pid decides
                    info = read_lock(self.path)
                    if (
                        info.get("pid") != os.getpid()
                        and info.get("host") in (None, socket.gethostname())
                        and _alive(info.get("pid"))
                    ):
                        raise self._busy(info)
                try:
                    same = os.path.samestat(os.fstat(fd), os.stat(self.path, follow_symlinks=False))
                except FileNotFoundError:
                    same = False
                if not same:  # the holder removed it while we waited: take the new file
                    os.close(fd)
                    continue
                info = read_lock(self.path)
                if info.get("pid") not in (None, os.getpid()):
                    log.warning(
                        "rageval: warning: taking over the lock of %s in %s: that process is gone",
                        _describe(info),
                        self.dir,
                    )
                self._write(fd)
                return fd
            except BaseException:
                os.close(fd)
                raise
        raise RunFailure(f"could not lock {self.path}: it keeps being replaced; is another program removing it?")

    def _flock(self, fd: int) -> bool:
        """True when the flock is held; False when the file system has none; OutDirBusy when another holds it."""
        if fcntl is None:  # pragma: no cover
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise self._busy(read_lock(self.path)) from None
        except OSError as err:
            if err.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                return False
            raise
        return True

    def _busy(self, info: dict[str, Any]) -> OutDirBusy:
        return OutDirBusy(
            f"output directory {self.dir} is in use by {_describe(info)}; wait for it to finish, or choose another "
            "--out (one writer per run directory)"
        )

    def _write(self, fd: int) -> None:
        data = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": self.command,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        raw = (json.dumps(data, sort_keys=True) + "\n").encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, raw, 0)


def holds_out_dir(argument: str, command: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: hold the :class:`OutDirLock` of the directory passed as ``argument`` while the function runs.

    >>> import tempfile
    >>> @holds_out_dir("out", "doctest")
    ... def write(out):
    ...     return (Path(out) / LOCK_NAME).exists()
    >>> write(tempfile.mkdtemp())
    True
    """

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            directory = sig.bind(*args, **kwargs).arguments[argument]
            with OutDirLock(directory, command):
                return fn(*args, **kwargs)

        return inner

    return wrap
