# SPDX-License-Identifier: BSD-3-Clause
"""Built-in demo data: a seeded census-like population with synthetic versions of graded leakiness."""

from __future__ import annotations

from synthrisk.datasets.demo import DEMO_METADATA, DemoData, demo_metrics, load_demo

__all__ = ["DEMO_METADATA", "DemoData", "demo_metrics", "load_demo"]
