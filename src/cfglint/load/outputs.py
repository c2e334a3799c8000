"""The one rule for every file cfglint writes: reports (``-o``), pictures (``--plot``), the
probe's logs (``--log-dir``), cache entries, and the edits of ``--fix``.

Issue 32 saw ``logs mf.html mg.log --plot mf.html`` replace the input log with the page, a
fixed temporary name (``p.html.tmp``) followed a planted link to overwrite another file, and
a read-only folder or an existing file as ``--log-dir`` fail only after the whole probe had
run. So every writer goes through this module, and the rule is:

* **checked before the work starts** (:func:`check_target`, :func:`check_folder`): the target
  is not an input of the run (same device and inode as a named input or any file the run
  has read, so a hard or symbolic link to an input is that input), not a symbolic link
  (cfglint replaces only files it can name; a link it did not create is refused, never
  followed), not a FIFO, device or folder; its folder exists, is writable and is not on a
  full disk; an existing target is writable (its permissions are respected, also when the
  run has root's privileges): one :class:`InputError` line, exit 2;
* **written atomically** (:func:`write_atomic`): a unique temporary file created with
  ``O_EXCL`` in the target's own folder (``tempfile.mkstemp``: never a fixed name, never
  through a link), flushed to disk, given the mode a plain ``open(path, "w")`` would give,
  then renamed over the target; a failure leaves the previous file whole and no temporary
  behind;
* **checked again just before the rename** against every file the run has read, since a
  folder lint learns its inputs while it runs.

Callers that write something other than bytes (matplotlib's ``savefig``) pass a function
that writes into the open temporary file. ``--fix`` rewrites its own inputs on purpose:
:func:`rewrite_file` is the same rule without the "never an input" part.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterable
from typing import Any, BinaryIO

from cfglint.load.safeio import kind_of, was_read
from cfglint.model.errors import InputError

# the suffix of every temporary file cfglint creates (a dead run's are pruned by the cache)
TMP_SUFFIX = ".cfglint-tmp"
# argparse destinations that name files or folders a run reads, in every subcommand
INPUT_ARGS = (
    "files",
    "megatron",
    "launch",
    "source",
    "loss_log",
    "tokenizer",
    "config",
    "mf_log",
    "mg_log",
    "baseline",
)
# destinations that name a file a run writes, and what each is called in a message
OUTPUT_ARGS = {"output": "report", "plot": "plot"}
# destinations that name a folder a run writes files into
FOLDER_ARGS = {"log_dir": "--log-dir"}

Writer = Callable[[BinaryIO], Any]


def named_inputs(args: Any) -> list[str]:
    """Every path named on the command line as something to read (a dataset prefix with
    its ``.bin`` and ``.idx``)."""
    out: list[str] = []
    for name in INPUT_ARGS:
        v = getattr(args, name, None)
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, str))
    data = getattr(args, "data", None)
    if isinstance(data, str):
        out += [data, data + ".bin", data + ".idx"]
    return [p for p in out if p and p != "-"]


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _read_only(st: os.stat_result, path: str) -> bool:
    """No write permission: ``access`` for an ordinary user; the mode bits too, so that a
    run with root's privileges still leaves a file or folder the user made read-only."""
    return not os.access(path, os.W_OK) or not st.st_mode & 0o222


def check_folder_writable(folder: str, shown: str, what: str) -> None:
    """The folder a file will be created in: it exists, is a folder, is writable, and its
    disk has room (a full disk fails here, before any work)."""
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        raise InputError(shown, f"cannot write the {what}: no such folder") from None
    except OSError as exc:
        raise InputError(shown, f"cannot write the {what}: {_why(exc)}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(shown, f"cannot write the {what}: {folder} is not a folder")
    if _read_only(st, folder):
        raise InputError(shown, f"cannot write the {what}: the folder {folder} is read-only")
    try:
        vfs = os.statvfs(folder)
    except OSError:
        return
    if vfs.f_bavail == 0 and vfs.f_blocks > 0:
        raise InputError(shown, f"cannot write the {what}: the disk holding {folder} is full")
    # a read-only file system, or a folder the user may not create files in, shows only
    # when a file is created: create (and remove) an empty one
    try:
        import tempfile

        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".cfglint-probe-", suffix=TMP_SUFFIX)
    except OSError as exc:
        raise InputError(shown, f"cannot write the {what}: {_why(exc)}") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def _same_file(what: str, name: str | None, output: str) -> InputError:
    which = f" ({name})" if name and name != output else ""
    return InputError(
        output,
        f"is an input of this run{which}; writing the {what} there would replace it: "
        "give another file",
    )


def check_target(output: str, inputs: Iterable[str] = (), *, what: str = "report") -> None:
    """Refuse (one :class:`InputError`) an output that cfglint may not replace: a symbolic
    link, anything but a regular file, a read-only file, one of ``inputs`` or any file this
    run has read; and one whose folder cannot take a new file."""
    try:
        lst = os.lstat(output)
    except FileNotFoundError:
        lst = None
    except ValueError:
        raise InputError(output, f"is not a valid path for the {what}") from None
    except OSError as exc:
        raise InputError(output, f"cannot write the {what}: {_why(exc)}") from None
    if lst is not None:
        _check_existing(output, lst, inputs, what)
    folder = os.path.dirname(os.path.abspath(output)) or "."
    check_folder_writable(folder, output, what)


def _check_existing(output: str, lst: os.stat_result, inputs: Iterable[str], what: str) -> None:
    if stat.S_ISLNK(lst.st_mode):
        st = _stat(output)
        if st is not None and (was_read(st) or _matches(st, inputs)):
            raise _same_file(what, _matches(st, inputs), output)
        raise InputError(
            output,
            f"is a symbolic link; cfglint writes the {what} only to a file it can replace, "
            "never through a link: give the real path",
        )
    if not stat.S_ISREG(lst.st_mode):
        raise InputError(
            output, f"is {kind_of(lst.st_mode)}; the {what} is written to a regular file only"
        )
    name = _matches(lst, inputs)
    if name is not None or was_read(lst):
        raise _same_file(what, name, output)
    if _read_only(lst, output):
        raise InputError(output, f"is read-only; cfglint does not replace it with the {what}")


def _matches(st: os.stat_result, inputs: Iterable[str]) -> str | None:
    """The first of ``inputs`` that is the file ``st`` describes, if any."""
    for p in inputs:
        other = _stat(p)
        if other is not None and (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return p
    return None


def check_folder(path: str, inputs: Iterable[str] = (), *, what: str = "--log-dir") -> None:
    """A folder the run will create files in (``--log-dir``): an existing file, link or
    input there is refused, and so is a parent that cannot take it."""
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        parent = os.path.dirname(os.path.abspath(path)) or "."
        check_folder_writable(parent, path, what)
        return
    except (OSError, ValueError) as exc:
        raise InputError(path, f"is not a folder {what} can write into: {exc}") from None
    if stat.S_ISLNK(lst.st_mode):
        raise InputError(
            path, f"is a symbolic link; {what} writes into a real folder only, never through a link"
        )
    if not stat.S_ISDIR(lst.st_mode):
        raise InputError(path, f"is {_kind(lst.st_mode)}; {what} names a folder")
    if _matches(lst, inputs) is not None:
        raise InputError(path, f"is an input folder of this run; {what} needs another folder")
    check_folder_writable(path, path, what)


def _kind(mode: int) -> str:
    return "a regular file" if stat.S_ISREG(mode) else kind_of(mode)


def _walked_by(target: str, inputs: list[str]) -> str | None:
    """The named folder whose walk would read an existing ``target`` (a config or script
    name under it, a Python file under a --source folder, an event file under a
    TensorBoard run's folder), if any."""
    from cfglint.load.walk import WALK_EXT

    base = os.path.basename(target).lower()
    read = base.endswith((*WALK_EXT, ".py")) or "tfevents" in base
    if not os.path.isfile(target) or not read:
        return None
    real = os.path.realpath(target)
    for p in inputs:
        if os.path.isdir(p):
            top = os.path.realpath(p).rstrip(os.sep) + os.sep
            if real.startswith(top):
                return p
    return None


def check_targets(args: Any) -> None:
    """Before any work: each output of this command line against its named inputs (and
    the files a named folder's walk would read), and each output folder."""
    inputs = named_inputs(args)
    for name, what in OUTPUT_ARGS.items():
        target = getattr(args, name, None)
        if isinstance(target, str) and target:
            check_target(target, inputs, what=what)
            folder = _walked_by(target, inputs)
            if folder is not None:
                raise _same_file(what, folder, target)
    for name, what in FOLDER_ARGS.items():
        target = getattr(args, name, None)
        if isinstance(target, str) and target:
            check_folder(target, inputs, what=what)


def _new_file_mode(path: str) -> int:
    """The mode the file would get from a plain ``open(path, "w")``: the existing file's, or
    0o666 less the umask (mkstemp's 0o600 would hide a report from the rest of a CI job)."""
    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode):
            return stat.S_IMODE(st.st_mode)
    except OSError:
        pass
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def replace_file(path: str, data: bytes | Writer) -> None:
    """Replace ``path`` all at once: a unique temporary file in the same folder (created
    with ``O_EXCL``, so never a planted link), flushed to disk, then renamed over the
    target. A symbolic link at ``path`` is replaced, never followed. A failure (full disk,
    read-only folder) leaves the previous file whole and no temporary behind; it raises
    ``OSError``. For callers that checked the target themselves (the cache)."""
    real = os.path.abspath(path)
    folder = os.path.dirname(real) or "."
    mode = _new_file_mode(real)
    import tempfile  # with shutil, bz2 and lzma: only a run that writes pays for it

    fd, tmp = tempfile.mkstemp(
        dir=folder, prefix=f".{os.path.basename(real)[:64]}.", suffix=TMP_SUFFIX
    )
    try:
        with os.fdopen(fd, "wb") as fh:
            if isinstance(data, bytes):
                fh.write(data)
            else:
                data(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(
    path: str,
    data: str | bytes | Writer,
    *,
    what: str = "report",
    inputs: Iterable[str] = (),
) -> None:
    """Write ``data`` (text, bytes, or a function writing into a binary file) to ``path``
    under the whole rule: checked again (the run's reads so far, ``inputs``), then replaced
    atomically. Every failure is one :class:`InputError` naming ``path``."""
    check_target(path, inputs, what=what)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        replace_file(path, raw)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise InputError(path, f"cannot write the {what}: the disk is full") from None
        raise InputError(path, f"cannot write the {what}: {_why(exc)}") from None


def rewrite_file(path: str, data: str | bytes | Writer, *, what: str = "fix") -> None:
    """Replace a file the run has read on purpose (``--fix`` edits its own inputs): the
    rule without the "never an input" part. A symbolic link, anything but a regular file
    and a read-only file are refused (the caller decides whether to edit a link's target
    instead); the new bytes keep the file's mode and replace it atomically. Every failure
    is one :class:`InputError` naming ``path``."""
    try:
        lst = os.lstat(path)
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot write the {what}: {exc}") from None
    if stat.S_ISLNK(lst.st_mode):
        raise InputError(path, f"is a symbolic link; the {what} is written to its target only")
    if not stat.S_ISREG(lst.st_mode):
        raise InputError(path, f"is {kind_of(lst.st_mode)}; the {what} edits regular files only")
    if _read_only(lst, path):
        raise InputError(path, f"is read-only; cfglint does not write the {what} into it")
    check_folder_writable(os.path.dirname(os.path.abspath(path)) or ".", path, what)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        replace_file(path, raw)
    except OSError as exc:
        raise InputError(path, f"cannot write the {what}: {_why(exc)}") from None
