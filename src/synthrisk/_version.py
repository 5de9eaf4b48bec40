# SPDX-License-Identifier: BSD-3-Clause
"""synthrisk's version: the one place it is written (``pyproject.toml`` reads it here)."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
