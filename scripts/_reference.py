# SPDX-License-Identifier: BSD-3-Clause
"""The command line shared by the golden-recording scripts of peer libraries.

Each script writes its input tables with this repository's Python, then runs itself again
with ``--child`` inside the reference library's virtual environment, where ``record()``
computes the goldens. Standard library only: the reference environment has no synthrisk.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path


def main(
    script: str,
    record: Callable[[], None],
    *,
    package: str,
    write_inputs: Callable[[], None] | None = None,
    env: dict[str, str] | None = None,
) -> None:
    """Parse ``--ref-venv`` / ``--child``; record in the child, else prepare and spawn it.

    ``script`` is the calling script's ``__file__``, ``package`` what to ``pip install``
    into the reference environment, ``env`` extra environment variables for the child.
    """
    doc = sys.modules["__main__"].__doc__ or ""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--ref-venv", type=Path, required=False)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        record()
        return
    if write_inputs is not None:
        write_inputs()
    if args.ref_venv is None:
        sys.exit(f"pass --ref-venv PATH (a venv with `pip install {package}`)")
    # the child runs in a temporary folder: caches a reference library writes to its
    # working directory (synthcity's ./workspace, ...) never land in the repository
    with tempfile.TemporaryDirectory(prefix=f"synthrisk-{package}-") as scratch:
        subprocess.run(
            [
                str(args.ref_venv.absolute() / "bin" / "python"),
                str(Path(script).resolve()),
                "--child",
            ],
            check=True,
            cwd=scratch,
            env={**os.environ, **(env or {})},
        )
