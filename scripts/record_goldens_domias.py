# SPDX-License-Identifier: BSD-3-Clause
"""Record golden values of the DOMIAS authors' package (``domias`` on PyPI), KDE and prior.

    python scripts/record_goldens_domias.py --ref-venv PATH

``PATH`` is a virtual environment with ``pip install domias`` (0.0.5; a CPU torch is
enough). The tables are those of ``scripts/record_goldens_synthcity.py``
(``tests/metrics/data/synthcity_domias_*.csv``; run that script first). DOMIAS'
``evaluate_performance`` trains a generator; here a stand-in returns the recorded
synthetic table, so the attack sees exactly those rows. Recorded into
``tests/metrics/data/domias_goldens.json``: the members' and non-members' DOMIAS scores
``p_G / (p_R + 1e-10)``, the synthetic density ``p_G`` (DOMIAS' ``eq1`` scores) and the
``aucroc`` of DOMIAS, for ``density_estimator="kde"`` and ``"prior"``. (The package also
trains a CTGAN on the synthetic rows for its LOGAN baseline, with an import of the
``ctgan`` package whose current API it no longer matches; that baseline is replaced by
a stand-in returning a constant score. It is not recorded and DOMIAS does not use it.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _reference import main as run_reference

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "metrics" / "data"
MEMBERS = 400
REFERENCE_SIZE = 200


def record() -> None:
    import importlib.metadata
    import types

    import numpy as np
    import pandas as pd
    import torch

    class _NoLogan:
        """Stand-in for the CTGAN of DOMIAS' LOGAN baseline (not recorded)."""

        def __init__(self, **_: object) -> None:
            self._transformer = types.SimpleNamespace(transform=np.asarray)
            self._discriminator = lambda x: torch.zeros(len(x), 1)

        def fit(self, data: pd.DataFrame) -> None:
            return None

    sys.modules["domias.models.ctgan"] = types.SimpleNamespace(CTGAN=_NoLogan)  # type: ignore[assignment]
    from domias.evaluator import evaluate_performance
    from domias.models.generator import GeneratorInterface

    members, population, syn = (
        pd.read_csv(DATA / f"synthcity_domias_{name}.csv")
        for name in ("members", "population", "synthetic")
    )

    class Recorded(GeneratorInterface):
        def fit(self, data: pd.DataFrame) -> Recorded:
            return self

        def generate(self, count: int) -> pd.DataFrame:
            return syn.copy()

    # DOMIAS' split: members dataset[:M], non-members dataset[M:2M], reference dataset[-R:]
    dataset = np.vstack([members.to_numpy(), population.to_numpy()])
    goldens: dict = {"domias_version": importlib.metadata.version("domias")}
    for density in ("kde", "prior"):
        out = evaluate_performance(
            Recorded(),
            dataset.copy(),
            mem_set_size=MEMBERS,
            reference_set_size=REFERENCE_SIZE,
            training_epochs=1,
            synthetic_sizes=[len(syn)],
            density_estimator=density,
            device="cpu",
        )[len(syn)]
        goldens[density] = {
            "aucroc": float(out["MIA_performance"]["domias"]["aucroc"]),
            "p_rel": [float(v) for v in out["MIA_scores"]["domias"]],
            "p_G": [float(v) for v in out["MIA_scores"]["eq1"]],
        }
    (DATA / "domias_goldens.json").write_text(json.dumps(goldens, indent=1) + "\n")
    print({k: v["aucroc"] for k, v in goldens.items() if isinstance(v, dict)})


def main() -> None:
    run_reference(__file__, record, package="domias")


if __name__ == "__main__":
    main()
