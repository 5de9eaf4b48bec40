# SPDX-License-Identifier: BSD-3-Clause
"""The ``synthrisk`` command line."""

from __future__ import annotations

from synthrisk.cli.main import main

__all__ = ["main"]
