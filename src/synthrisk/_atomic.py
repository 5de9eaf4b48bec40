# SPDX-License-Identifier: BSD-3-Clause
"""All-or-nothing text output: the one place synthrisk writes files.

Every file goes to a temporary file in its target folder first; only when all are
written are they renamed into place, so a failure leaves no partial report behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from synthrisk.exceptions import InputError

__all__ = ["write_text_atomic", "write_texts_atomic"]


def write_texts_atomic(outputs: Mapping[Path, str]) -> list[Path]:
    """Write every ``{path: text}`` entry, or none of them.

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
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    return list(outputs)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` atomically (temporary file + rename), creating folders.

    Raises
    ------
    InputError
        If the folder cannot be created or written.
    """
    return write_texts_atomic({Path(path): text})[0]
