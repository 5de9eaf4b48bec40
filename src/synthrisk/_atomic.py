# SPDX-License-Identifier: BSD-3-Clause
"""All-or-nothing text output: the one place synthrisk writes files.

Every file goes to a temporary file in its target folder first; only when all are
written are they renamed into place, so a failure leaves no partial report behind.
The files get the permissions any other program would give them: those of the file
they replace, else ``0o666`` less the process umask (``0o644`` under the usual umask
022), not the private ``0o600`` of a temporary file.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from synthrisk.exceptions import InputError

__all__ = [
    "check_output_paths",
    "new_file_mode",
    "write_text_atomic",
    "write_texts_atomic",
]


def new_file_mode(path: Path) -> int:
    """The permission bits ``path`` should get: kept when it exists, else 0o666 & ~umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        pass
    umask = os.umask(0o022)  # reading the umask means setting it; put it back at once
    os.umask(umask)
    return 0o666 & ~umask


def _stream_target(path: Path) -> bool:
    """True for ``-`` (standard output) and for existing non-regular files (a device, a pipe)."""
    if str(path) == "-":
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def check_output_paths(paths: Iterable[Path]) -> None:
    """Refuse output paths that are folders, or that name the same file twice.

    Raises
    ------
    InputError
        If a path is an existing folder or two paths are the same file.
    """
    seen: dict[Path, Path] = {}
    for path in paths:
        if str(path) == "-":
            if Path("-") in seen:
                msg = "only one output can go to standard output (`-`)."
                raise InputError(msg)
            seen[Path("-")] = path
            continue
        try:
            is_dir, key = path.is_dir(), path.resolve()
        except OSError as exc:  # a name the system refuses (too long, ...)
            msg = f"cannot write {str(path)!r}: {exc.strerror or exc}."
            raise InputError(msg) from None
        if is_dir:
            msg = f"cannot write {str(path)!r}: it is a folder; give a file name such as {str(path / 'report.json')!r}."
            raise InputError(msg)
        if key in seen:
            msg = f"two outputs would be written to the same file {str(path)!r}; give each its own file name."
            raise InputError(msg)
        seen[key] = path


def write_texts_atomic(outputs: Mapping[Path, str | bytes]) -> list[Path]:
    """Write every ``{path: text}`` entry (str as UTF-8, or bytes), or none of them.

    Every file is first written in full beside its target; only then are the files
    moved into place, each atomically, so no reader ever sees a partial file and a
    failure while writing leaves every target as it was. (The moves of several files are
    not one transaction: should the system refuse a move after earlier ones succeeded,
    the earlier targets hold their new contents.) Folders are created as needed. ``-`` means standard output, and an existing
    device or pipe (``/dev/stdout``) is written directly: neither can be replaced
    atomically. Returns the paths written, in order.

    Raises
    ------
    InputError
        If a folder cannot be created or written, or a path is a folder or named
        twice; nothing is written then.
    """
    check_output_paths(outputs)
    staged: list[tuple[str, Path]] = []
    streams: list[tuple[Path, bytes]] = []
    try:
        for path, text in outputs.items():
            data = text if isinstance(text, bytes) else text.encode("utf-8")
            if _stream_target(path):
                streams.append((path, data))
                continue
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(
                    prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
                )
            except OSError as exc:
                rest = "; no output was written." if len(outputs) > 1 else "."
                msg = f"cannot write {str(path)!r}: {exc.strerror or exc}{rest}"
                raise InputError(msg) from None
            staged.append((tmp, path))
            if hasattr(os, "fchmod"):
                os.fchmod(fd, new_file_mode(path))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        for tmp, path in staged:
            try:
                os.replace(tmp, path)
            except OSError as exc:
                msg = f"cannot write {str(path)!r}: {exc.strerror or exc}."
                raise InputError(msg) from None
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    for path, data in streams:
        _write_stream(path, data)
    return list(outputs)


def _write_stream(path: Path, data: bytes) -> None:
    if str(path) == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        with open(path, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        msg = f"cannot write {str(path)!r}: {exc.strerror or exc}."
        raise InputError(msg) from None


def write_text_atomic(path: str | os.PathLike[str], text: str | bytes) -> Path:
    """Write ``text`` to ``path`` atomically (temporary file + rename), creating folders.

    Raises
    ------
    InputError
        If the folder cannot be created or written.
    """
    return write_texts_atomic({Path(path): text})[0]
