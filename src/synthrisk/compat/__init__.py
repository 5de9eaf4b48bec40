# SPDX-License-Identifier: BSD-3-Clause
"""Drop-in layers that mirror reference libraries' APIs on top of synthrisk's metrics.

* :mod:`synthrisk.compat.sdmetrics`: SDMetrics 0.32's privacy metric classes
  (``from synthrisk.compat.sdmetrics import DisclosureProtection``).
* :mod:`synthrisk.compat.anonymeter`: Anonymeter 1.1's evaluators
  (``from synthrisk.compat.anonymeter import SinglingOutEvaluator``).
* :mod:`synthrisk.compat.apt`: ai-privacy-toolkit 0.2.1's dataset assessment
  (``from synthrisk.compat.apt import DatasetAssessmentManager``).
* :mod:`synthrisk.compat.petsard`: PETsARD's YAML configuration files and CSV reports
  (``synthrisk run petsard.yaml``).
"""

from __future__ import annotations

__all__: list[str] = []
