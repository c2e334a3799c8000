"""Reading user files defensively: size cap, binary detection, strict UTF-8."""

from __future__ import annotations

import os

from cfglint.model.errors import InputError

# Real configs and launch scripts are a few KiB; 8 MiB leaves room for training logs
# while keeping a hostile input from exhausting memory.
MAX_BYTES = 8 * 1024 * 1024


def read_text(path: str, *, max_bytes: int = MAX_BYTES, what: str = "file") -> str:
    """Return the text of ``path`` or raise one clear :class:`InputError`."""
    if not os.path.exists(path):
        raise InputError(path, f"no such {what}")
    if os.path.isdir(path):
        raise InputError(path, f"is a directory, expected a {what}")
    try:
        size = os.path.getsize(path)
        if size > max_bytes:
            raise InputError(
                path, f"{what} is {size} bytes, larger than the {max_bytes}-byte limit"
            )
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(path, f"cannot read {what}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise InputError(path, f"{what} is larger than the {max_bytes}-byte limit")
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
