"""Reading user files defensively: regular files only, size cap, binary detection, strict
UTF-8, bounded lines.

Every loader opens user files through :func:`open_regular`: a FIFO, a device (``/dev/zero``),
a socket, a folder or a symbolic-link loop in any input slot becomes one clear
:class:`InputError` instead of a read that blocks forever or never ends. The file is opened
with ``O_NONBLOCK`` first, so even opening a FIFO that has no writer returns at once, and the
type check is made on the opened descriptor (no window between check and open).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from cfglint.model.errors import InputError

# Real configs and launch scripts are a few KiB; 8 MiB leaves room for training logs
# while keeping a hostile input from exhausting memory.
MAX_BYTES = 8 * 1024 * 1024
# A line longer than this is not a config, script or log line anyone wrote.
MAX_LINE = 1024 * 1024

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


# (device, inode) of every file this run opened for reading: an output must never be one of
# them (issue 20: `-o c.yaml` replaced the config it had just read with the report).
_READ: set[tuple[int, int]] = set()


def note_read(st: os.stat_result) -> None:
    """Remember that the run reads the file ``st`` describes."""
    _READ.add((st.st_dev, st.st_ino))


def was_read(st: os.stat_result) -> bool:
    """Whether this run read the file ``st`` describes (through any name or link)."""
    return (st.st_dev, st.st_ino) in _READ


def forget_reads() -> None:
    """A new run starts (one process may run many, as the test suite does)."""
    _READ.clear()


class TooLarge(InputError):
    """A file over its size cap (callers may skip it with a warning instead of failing)."""


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _os_error(path: str, exc: OSError, what: str) -> InputError:
    if exc.errno == errno.ENOENT:
        if os.path.islink(path):
            return InputError(path, f"is a broken symbolic link, expected a {what}")
        return InputError(path, f"no such {what}")
    if exc.errno == errno.ELOOP:
        return InputError(path, f"is a symbolic link loop, expected a {what}")
    if exc.errno == errno.EISDIR:
        return InputError(path, f"is a directory, expected a {what}")
    return InputError(path, f"cannot read {what}: {exc.strerror or exc}")


def check_regular(path: str, *, what: str = "file") -> os.stat_result:
    """``stat`` of ``path`` if it is a regular file (symbolic links followed), else one clear
    :class:`InputError`. Never opens the file. An editor buffer for a file not saved yet is
    a regular file of its text's size."""
    text = _BUFFERS.get(os.path.abspath(path)) if _BUFFERS else None
    if text is not None and not os.path.lexists(path):
        size = len(text.encode("utf-8"))
        return os.stat_result((stat.S_IFREG | 0o644, 0, 0, 1, 0, 0, size, 0, 0, 0))
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _os_error(path, exc, what) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(path, f"is {_kind(st.st_mode)}, not a regular file; expected a {what}")
    note_read(st)
    return st


def is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def open_regular(path: str, *, what: str = "file", follow: bool = True) -> BinaryIO:
    """Open ``path`` for binary reading if it is a regular file; raise :class:`InputError`
    for anything else (FIFO, device, socket, folder, loop, missing, unreadable, and with
    ``follow=False`` a symbolic link)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _os_error(path, exc, what) from None
    except ValueError:  # a NUL byte in the name
        raise InputError(path, f"is not a valid path for a {what}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(path, f"is {_kind(st.st_mode)}, not a regular file; expected a {what}")
        note_read(st)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def iter_lines(
    fh: BinaryIO, path: str, *, what: str = "file", max_line: int = MAX_LINE
) -> Iterator[tuple[int, bytes, bool]]:
    """``(line number, raw line, too_long)`` for each line, never holding more than
    ``max_line`` bytes of one line in memory; a longer line is yielded cut, with
    ``too_long``. An I/O error while reading becomes an :class:`InputError` at that line."""
    n = 0
    while True:
        try:
            raw = fh.readline(max_line + 1)
        except OSError as exc:
            raise InputError(
                path, f"cannot read {what}: {exc.strerror or exc}", line=n + 1
            ) from None
        if not raw:
            return
        n += 1
        if len(raw) > max_line and not raw.endswith(b"\n"):
            # skip the rest of the over-long line in bounded chunks
            try:
                while True:
                    rest = fh.readline(max_line)
                    if not rest or rest.endswith(b"\n"):
                        break
            except OSError as exc:
                raise InputError(
                    path, f"cannot read {what}: {exc.strerror or exc}", line=n
                ) from None
            yield n, raw[:max_line], True
            continue
        yield n, raw, False


# Unsaved editor buffers (``cfglint server``): absolute path -> text, read in place of the
# file on disk, so that a lint sees what the user is typing. Empty outside the server.
_BUFFERS: dict[str, str] = {}


@contextmanager
def buffers(texts: dict[str, str]) -> Iterator[None]:
    """Read ``texts`` (absolute path -> text) instead of those files while inside."""
    saved = dict(_BUFFERS)
    _BUFFERS.update(texts)
    try:
        yield
    finally:
        _BUFFERS.clear()
        _BUFFERS.update(saved)


def exists(path: str) -> bool:
    """Whether ``path`` names something to read: a file (or link) on disk, or an editor
    buffer not saved yet (issue 32: a new launch script in the editor was "no such
    file")."""
    if _BUFFERS and os.path.abspath(path) in _BUFFERS:
        return True
    return os.path.lexists(path)


def read_bytes(
    path: str, *, max_bytes: int = MAX_BYTES, what: str = "file", follow: bool = True
) -> bytes:
    """The bytes of a regular file no larger than ``max_bytes``, or one :class:`InputError`."""
    if _BUFFERS:
        text = _BUFFERS.get(os.path.abspath(path))
        if text is not None:
            data = text.encode("utf-8")
            if len(data) > max_bytes:
                raise TooLarge(path, f"{what} is larger than the {max_bytes}-byte limit")
            return data
    with open_regular(path, what=what, follow=follow) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise TooLarge(path, f"{what} is {size} bytes, larger than the {max_bytes}-byte limit")
        try:
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise InputError(path, f"cannot read {what}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # a file that grew, or /proc-like files that report size 0
        raise TooLarge(path, f"{what} is larger than the {max_bytes}-byte limit")
    return data


def decode_text(data: bytes, path: str, *, what: str = "file") -> str:
    """Strict UTF-8 text of ``data`` (BOM dropped); binary data and bad bytes are one
    :class:`InputError` naming the offset and line."""
    if b"\x00" in data[:65536]:
        raise InputError(path, f"looks like a binary file, not a text {what}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            path,
            f"is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            line=line,
        ) from None
    return text.removeprefix("\ufeff")


def read_text(path: str, *, max_bytes: int = MAX_BYTES, what: str = "file") -> str:
    """Return the text of ``path`` or raise one clear :class:`InputError`."""
    return decode_text(read_bytes(path, max_bytes=max_bytes, what=what), path, what=what)


def text_if_small(path: str, *, max_bytes: int = MAX_BYTES) -> str:
    """Best-effort text of a file a finding points at (for suppression comments and SARIF
    snippets): "" unless it is a readable regular text file of at most ``max_bytes``. A
    dataset ``.bin``, ``/dev/zero`` or a FIFO is never read."""
    try:
        data = read_bytes(path, max_bytes=max_bytes)
    except InputError:
        return ""
    if b"\x00" in data[:65536]:
        return ""
    return data.decode("utf-8", "replace")


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words ("a named pipe (FIFO)", "a directory", ...)."""
    return _kind(mode)


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (through any link or spelling)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False
