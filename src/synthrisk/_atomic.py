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
import tempfile
from collections.abc import Mapping
from pathlib import Path

from synthrisk.exceptions import InputError

__all__ = ["new_file_mode", "write_text_atomic", "write_texts_atomic"]


def new_file_mode(path: Path) -> int:
    """The permission bits ``path`` should get: kept when it exists, else 0o666 & ~umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        pass
    umask = os.umask(0o022)  # reading the umask means setting it; put it back at once
    os.umask(umask)
    return 0o666 & ~umask


def write_texts_atomic(outputs: Mapping[Path, str | bytes]) -> list[Path]:
    """Write every ``{path: text}`` entry (str as UTF-8, or bytes), or none of them.

    Folders are created as needed. Returns the paths written, in order.

    Raises
    ------
    InputError
        If a folder cannot be created or written; nothing is written then.
    """
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in outputs.items():
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
            data = text if isinstance(text, bytes) else text.encode("utf-8")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    return list(outputs)


def write_text_atomic(path: str | os.PathLike[str], text: str | bytes) -> Path:
    """Write ``text`` to ``path`` atomically (temporary file + rename), creating folders.

    Raises
    ------
    InputError
        If the folder cannot be created or written.
    """
    return write_texts_atomic({Path(path): text})[0]
