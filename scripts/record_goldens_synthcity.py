# SPDX-License-Identifier: BSD-3-Clause
"""Record golden values of synthcity's ε-identifiability and DOMIAS (KDE and prior).

    python scripts/record_goldens_synthcity.py --ref-venv PATH

``PATH`` is a virtual environment with ``pip install synthcity`` (0.2.x; its CPU torch
is enough). The script generates numeric tables from a fixed seed, writes them to
``tests/metrics/data/synthcity_*.csv``, re-runs itself with the venv's Python and
records into ``tests/metrics/data/synthcity_goldens.json``:

* ``IdentifiabilityScore._compute_scores`` (the ``score`` key, before synthcity's
  one-class embedding ``score_OC``, which trains a network) on a table of 5 columns
  (scikit-learn searches it with a KD-tree) and of 20 columns (brute force);
* ``DomiasMIAKDE`` and ``DomiasMIAPrior``: the densities ``p_G`` and ``p_R`` that
  ``evaluate_p_R`` returns at the attacked rows, and the ``aucroc`` of ``evaluate``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from _reference import main as run_reference

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "metrics" / "data"
SEED = 20261124
REFERENCE_SIZE = 300


def _tables() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(SEED)
    out = {}
    for width in (5, 20):
        cov = 0.4 * np.ones((width, width)) + 0.6 * np.eye(width)
        real = rng.multivariate_normal(np.zeros(width), cov, 400)
        syn = rng.multivariate_normal(np.zeros(width), cov, 350)
        # some near-copies and some integer columns (ties)
        syn[:60] = real[rng.choice(400, 60, replace=False)] + rng.normal(
            0, 0.05, (60, width)
        )
        real[:, 0], syn[:, 0] = np.round(real[:, 0] * 3), np.round(syn[:, 0] * 3)
        columns = [f"x{i}" for i in range(width)]
        out[f"identifiability_{width}_real"] = pd.DataFrame(real, columns=columns)
        out[f"identifiability_{width}_synthetic"] = pd.DataFrame(syn, columns=columns)
    # DOMIAS: members, a generator that overfits them, the population
    width = 4
    cov = 0.5 * np.ones((width, width)) + 0.5 * np.eye(width)
    members = rng.multivariate_normal(np.zeros(width), cov, 400)
    population = rng.multivariate_normal(np.zeros(width), cov, 2 * REFERENCE_SIZE)
    syn = np.vstack(
        [
            members[rng.choice(400, 250)] + rng.normal(0, 0.2, (250, width)),
            rng.multivariate_normal(np.zeros(width), cov, 250),
        ]
    )
    columns = [f"x{i}" for i in range(width)]
    out["domias_members"] = pd.DataFrame(members, columns=columns)
    out["domias_population"] = pd.DataFrame(population, columns=columns)
    out["domias_synthetic"] = pd.DataFrame(syn, columns=columns)
    return out


def record() -> None:
    import importlib.metadata
    import tempfile

    from synthcity.metrics.eval_privacy import (
        DomiasMIAKDE,
        DomiasMIAPrior,
        IdentifiabilityScore,
    )
    from synthcity.plugins.core.dataloader import GenericDataLoader

    frames = {
        path.stem.removeprefix("synthcity_"): pd.read_csv(path)
        for path in OUT.glob("synthcity_*.csv")
    }
    goldens: dict = {"synthcity_version": importlib.metadata.version("synthcity")}
    # synthcity caches metric results under `workspace` (default ./workspace): a temporary one
    workspace = Path(tempfile.mkdtemp(prefix="synthrisk-synthcity-"))
    for width in (5, 20):
        real = GenericDataLoader(frames[f"identifiability_{width}_real"])
        syn = GenericDataLoader(frames[f"identifiability_{width}_synthetic"])
        scores = IdentifiabilityScore(workspace=workspace)._compute_scores(real, syn)
        goldens[f"identifiability_{width}"] = float(scores["score"])
    members = GenericDataLoader(frames["domias_members"])
    population = GenericDataLoader(frames["domias_population"])
    syn = GenericDataLoader(frames["domias_synthetic"])
    x_test = np.concatenate(
        [members.numpy(), population.numpy()[:REFERENCE_SIZE]], axis=0
    )
    for name, cls in (("kde", DomiasMIAKDE), ("prior", DomiasMIAPrior)):
        attack = cls(workspace=workspace)
        result = attack.evaluate(
            population, syn, members, syn, reference_size=REFERENCE_SIZE
        )
        p_g, p_r = attack.evaluate_p_R(
            syn.dataframe(),
            syn.dataframe(),
            population.numpy()[-REFERENCE_SIZE:],
            x_test,
            "cpu",
        )
        goldens[f"domias_{name}"] = {
            "aucroc": float(result["aucroc"]),
            "p_G": [float(v) for v in p_g],
            "p_R": [float(v) for v in p_r],
        }
    (OUT / "synthcity_goldens.json").write_text(json.dumps(goldens, indent=1) + "\n")
    print(json.dumps({k: v for k, v in goldens.items() if "domias" not in k}))


def _write_inputs() -> None:
    for name, frame in _tables().items():
        frame.to_csv(OUT / f"synthcity_{name}.csv", index=False)


def main() -> None:
    run_reference(__file__, record, package="synthcity", write_inputs=_write_inputs)


if __name__ == "__main__":
    main()
