# SPDX-License-Identifier: BSD-3-Clause
"""The command line shared by the golden-recording scripts of peer libraries.

Each script writes its input tables with this repository's Python, then runs itself again
with ``--child`` inside the reference library's virtual environment, where ``record()``
computes the goldens. Standard library only at import: the reference environment has no
synthrisk. The fingerprints below (NumPy and SciPy imported when called) file goldens whose
value depends on the machine; ``tests/conftest.py`` computes the same ones.
"""

from __future__ import annotations

import argparse
import hashlib
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


def partition_fingerprint() -> str:
    """Which of 171 equal values ``numpy.argpartition`` keeps among the 10 smallest.

    NumPy partitions with AVX-512, AVX2 or plain code as the CPU allows, and each keeps
    other rows among ties (and so does scikit-learn's brute-force neighbour search).
    """
    import numpy as np

    values = (np.arange(512) * 7919 % 3).astype(np.float64)
    kept = np.sort(np.argpartition(values, 9)[:10]).astype(np.int64)
    return hashlib.sha1(kept.tobytes()).hexdigest()[:12]


def blas_fingerprint() -> str:
    """How this process's BLAS rounds what scikit-learn's Euclidean search asks of it.

    One-thread ``dgemm`` (``-2 X Y^T`` as scikit-learn issues it) and ``ddot`` norms of
    fixed random values; OpenBLAS's kernels (``OPENBLAS_CORETYPE``) round them
    differently.
    """
    import numpy as np
    from scipy.linalg.blas import ddot, dgemm
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    digest = hashlib.sha1()
    shapes = ((256, 256, 24), (44, 44, 24), (256, 44, 20), (44, 256, 20), (7, 5, 3))
    with threadpool_limits(limits=1, user_api="blas"):
        for n_x, n_y, p in shapes:
            x, y = rng.normal(size=(n_x, p)), rng.normal(size=(n_y, p))
            digest.update(dgemm(-2.0, y.T, x.T, trans_a=1, trans_b=0).T.tobytes())
            digest.update(np.array([ddot(row, row) for row in x]).tobytes())
    return digest.hexdigest()[:12]


def exp_fingerprint() -> str:
    """How NumPy's ``exp`` rounds here: its AVX-512 code and the others differ in the last bit."""
    import numpy as np

    values = np.exp(-np.linspace(0.0, 8.0, 10_007))
    return hashlib.sha1(values.tobytes()).hexdigest()[:12]
