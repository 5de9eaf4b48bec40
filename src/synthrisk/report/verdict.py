# SPDX-License-Identifier: BSD-3-Clause
"""The verdict layer lives in :mod:`synthrisk.verdict`; the report only reads it.

This module is kept for code that imports the verdict from here: it re-exports every
public name of :mod:`synthrisk.verdict`.
"""

from __future__ import annotations

from synthrisk.verdict import *  # noqa: F403 - the names listed in synthrisk.verdict.__all__
from synthrisk.verdict import __all__ as __all__
