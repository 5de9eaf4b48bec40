# SPDX-License-Identifier: BSD-3-Clause
"""Drop-in layers that mirror other libraries' APIs on top of synthrisk's metrics.

* :mod:`synthrisk.compat.sdmetrics`: SDMetrics 0.32's privacy metric classes
  (``from synthrisk.compat.sdmetrics import DisclosureProtection``).
"""

from __future__ import annotations

__all__: list[str] = []
