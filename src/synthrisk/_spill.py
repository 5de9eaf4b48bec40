# SPDX-License-Identifier: BSD-3-Clause
"""Per-record scores of a cluster run, kept in memory-mapped scratch files.

A run on partitioned tables returns one value per row for most metrics: with millions
of rows, a dozen such arrays would fill the driver's memory long before the report is
written. After each metric, :func:`spill` writes its record arrays to
temporary files (in the folder of ``TMPDIR``, as :mod:`tempfile` chooses) and maps
them back read-only. The operating system then pages them in when they are read (the
HTML report's plots and drill-downs) and out again under memory pressure; they do not
count against the process's own memory while nobody reads them.

The files are deleted as soon as they are mapped: the mapping stays valid, and the
space is given back when the last array that uses it is garbage-collected, so a
crash leaves nothing behind. On Windows, where a mapped file cannot be deleted, the
arrays stay in memory.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

__all__ = ["SPILL_BYTES", "spill"]

#: arrays smaller than this stay in memory (a scratch file per small array costs more)
SPILL_BYTES = 1 << 20


def spill(array: np.ndarray, directory: str | None = None) -> np.ndarray:
    """A read-only memory map of a copy of ``array`` in an already deleted scratch file.

    Arrays under :data:`SPILL_BYTES`, empty arrays, and every array on Windows are
    returned as they are; so is an array that cannot be written (a full disk): the
    run goes on with it in memory.
    """
    array = np.asarray(array)
    if os.name == "nt" or array.nbytes < SPILL_BYTES or array.size == 0:
        return array
    array = np.ascontiguousarray(array)
    try:
        fd, path = tempfile.mkstemp(prefix="synthrisk-records-", dir=directory)
    except OSError:
        return array
    try:
        with os.fdopen(fd, "wb") as handle:
            array.tofile(handle)
        mapped = np.memmap(path, dtype=array.dtype, mode="r", shape=array.shape)
    except OSError:
        return array
    finally:
        os.unlink(path)
    return mapped
