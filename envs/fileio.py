"""Writing and reading files so that nothing is lost and nothing outside the target is touched.

Every file Parlour writes goes through here:

- :func:`atomic_write` writes a whole file through a temporary file with a unique name in the target's folder
  (``tempfile``: created with ``O_EXCL``, so a planted file or link of that name is never followed) and renames it
  over the target, so a reader sees the old file or the new one, never half of one; a link at the target is
  replaced, not written through.
- :func:`create_new` writes a file that must not exist yet (``O_EXCL``: an existing file or link is refused).
- :func:`append_text` appends to a log without following a link at its path (``O_NOFOLLOW``).
- :func:`read_json` reads a JSON file with one-line errors that name the file.
- :class:`FolderLock` holds a lock file in a folder while one process uses it; a second is refused with the
  holder's pid.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

#: Flags that refuse to follow a link at the path (0 where the platform has none).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class FileSafetyError(OSError):
    """A file that may not be written or read as asked; the message names it and says why."""


def atomic_write(
    target: str | Path, data: str | bytes | Callable[[Path], Any], mode: int = 0o644, *, replace: bool = True
) -> Path:
    """Write ``data`` (text, bytes, or a function that writes a given path) to ``target`` atomically: into a fresh
    temporary file beside it, then renamed over it. Returns ``target``.

    ``replace=False``: never replace anything at ``target`` (a file, folder or link there raises
    :class:`FileSafetyError`, also one that appeared while ``data`` was written): the finished file is hard-linked
    into place, which fails if the name is taken."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(name)
    try:
        if callable(data):
            os.close(fd)
            data(tmp)
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(data.encode() if isinstance(data, str) else data)
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, mode)  # a file to share, whatever mode the writer chose
        if replace:
            os.replace(tmp, target)
        else:
            _link_new(tmp, target, mode)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _link_new(tmp: Path, target: Path, mode: int) -> None:
    """Give the finished file ``tmp`` the name ``target`` too, unless that name is taken (no rename can refuse)."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        kind = "folder" if target.is_dir() else "file or link"
        raise FileSafetyError(f"{target} exists already (a {kind}); refusing to replace it") from None
    except OSError:  # a file system without hard links: an exclusive create instead
        create_new(target, tmp.read_bytes(), mode)


def create_new(path: str | Path, data: str | bytes, mode: int = 0o644) -> Path:
    """Write ``data`` to ``path``, which must not exist (a file, a folder or a link there is refused)."""
    path = Path(path)
    if path.is_dir():
        raise FileSafetyError(f"{path} is a folder, not a file")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode)
    except FileExistsError:
        raise FileSafetyError(f"{path} exists already; refusing to overwrite it") from None
    with os.fdopen(fd, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    return path


def append_text(path: str | Path, text: str) -> None:
    """Append ``text`` to the file at ``path`` (created if absent); a link at ``path`` is refused, not followed."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | _NOFOLLOW, 0o644)
    except OSError as exc:
        if path.is_symlink():
            raise FileSafetyError(f"{path} is a symbolic link; refusing to write through it") from None
        raise FileSafetyError(f"cannot append to {path}: {exc.strerror}") from None
    with os.fdopen(fd, "a") as f:
        f.write(text)


def read_json(path: str | Path, what: str = "JSON file") -> Any:
    """The JSON value in ``path``; a missing, unreadable or malformed file raises ``ValueError`` naming it."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ValueError(f"{what} not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read this {what}: {exc}") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:  # ValueError: JSONDecodeError, or an integer of over 4300 digits
        raise ValueError(f"{path} is not a valid {what} (not JSON: {exc})") from None


class LockedError(RuntimeError):
    """The folder is in use by another process."""


class FolderLock:
    """An exclusive lock on a folder (``folder/.parlour-lock``, holding the holder's pid) for one process.

    POSIX ``flock`` on the lock file: the lock ends with the process, so a crash leaves no stale lock behind (the
    file stays, unlocked). Where ``fcntl`` is missing (Windows) the lock file is created with ``O_EXCL`` instead.
    """

    NAME = ".parlour-lock"

    def __init__(self, folder: str | Path, what: str = "folder") -> None:
        self.path = Path(folder) / self.NAME
        self.what = what
        self._fd: int | None = None

    def acquire(self) -> FolderLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            try:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
            except FileExistsError:
                raise LockedError(self._message()) from None
        else:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o644)
            except OSError as exc:
                raise FileSafetyError(f"cannot open the lock file {self.path}: {exc.strerror}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise LockedError(self._message()) from None
            self._fd = fd
        os.ftruncate(self._fd, 0)
        os.write(self._fd, f"{os.getpid()}\n".encode())
        return self

    def _message(self) -> str:
        try:
            pid = self.path.read_text().strip() or "unknown"
        except OSError:
            pid = "unknown"
        return f"{self.what} {self.path.parent} is in use by another process (pid {pid}); wait for it to end"

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None
            try:
                import fcntl  # noqa: F401
            except ImportError:  # pragma: no cover - not POSIX: the file itself is the lock
                self.path.unlink(missing_ok=True)

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextlib.contextmanager
def locked(folder: str | Path, what: str = "folder") -> Iterator[FolderLock]:
    """``with locked(run, "run folder"):`` hold :class:`FolderLock` on ``folder`` for the block."""
    with FolderLock(folder, what) as lock:
        yield lock
