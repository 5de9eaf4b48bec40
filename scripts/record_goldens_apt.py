# SPDX-License-Identifier: BSD-3-Clause
"""Record golden values from IBM ai-privacy-toolkit (APT) 0.2.1 for the membership family.

Generates pre-encoded input tables deterministically from a seed, writes them as CSV
into ``tests/compat/data/apt/`` and runs APT's three dataset attacks and its
assessment manager on them inside APT's own virtual environment, writing
``goldens.json`` next to the inputs. The tests read both files; they never need APT.

    python scripts/record_goldens_apt.py [--ref-venv benchmarks/.venvs/apt]

The reference venv is created with ``../shared/tools/ref-venvs.sh`` when missing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# ../shared next to the repository (or next to the folder of worktrees)
SHARED = next(
    (
        p / "shared"
        for p in (ROOT.parent, ROOT.parent.parent)
        if (p / "shared").is_dir()
    ),
    ROOT.parent / "shared",
)
DEFAULT_OUT = ROOT / "tests" / "compat" / "data" / "apt"
DEFAULT_VENV = ROOT / "benchmarks" / ".venvs" / "apt"
SEED = 20240605


def _mixed_case(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """3 min-max scaled numbers + one-hot of a 3-level and a 4-level category (10 columns).

    10 columns keep scikit-learn on its exact KD-tree. Members and non-members share
    10 rows; the synthetic table holds exact copies of members, of shared rows (exact
    ties between the two sides) and of non-members, noisy member copies and fresh rows.
    """

    def draw(n: int) -> np.ndarray:
        numbers = np.column_stack(
            [
                rng.normal(40, 12, n),
                rng.gamma(2.0, 3.0, n),
                rng.integers(0, 20, n).astype(float),
            ]
        )
        a = np.eye(3)[rng.choice(3, n, p=[0.5, 0.3, 0.2])]
        b = np.eye(4)[rng.choice(4, n)]
        return np.column_stack([numbers, a, b])

    members = draw(240)
    non_members = np.vstack([members[:10], draw(80)])
    noisy = members[100:140].copy()
    noisy[:, :3] += rng.normal(0, [1.0, 0.5, 0.0], (40, 3))
    synthetic = np.vstack(
        [members[20:80], members[:10], non_members[10:30], noisy, draw(70)]
    )
    stacked = np.vstack([members, non_members, synthetic])
    lo, hi = stacked[:, :3].min(axis=0), stacked[:, :3].max(axis=0)
    for table in (members, non_members, synthetic):
        table[:, :3] = (table[:, :3] - lo) / (hi - lo)
    synthetic = synthetic[rng.permutation(len(synthetic))]
    return {"members": members, "non_members": non_members, "synthetic": synthetic}


def _gaussian_case(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """20 Gaussian columns (scikit-learn's brute-force search), 40 of 120 synthetic rows noisy member copies."""
    members = rng.normal(size=(150, 20))
    non_members = rng.normal(size=(150, 20))
    synthetic = np.vstack(
        [members[:40] + rng.normal(0, 0.3, (40, 20)), rng.normal(size=(80, 20))]
    )
    return {"members": members, "non_members": non_members, "synthetic": synthetic}


CASES = {
    "mixed": {"make": _mixed_case, "categorical_features": list(range(3, 10))},
    "gaussian": {"make": _gaussian_case, "categorical_features": []},
}


def write_inputs(out: Path) -> None:
    """Write every case's three tables as CSV (full float precision)."""
    import pandas as pd

    rng = np.random.default_rng(SEED)
    for case, spec in CASES.items():
        tables = spec["make"](rng)
        for name, array in tables.items():
            frame = pd.DataFrame(
                array, columns=[f"c{j}" for j in range(array.shape[1])]
            )
            frame.to_csv(out / f"{case}_{name}.csv", index=False)


def _record(out: Path) -> None:
    """Run APT on the written inputs (inside APT's venv) and write goldens.json."""
    import os

    import apt
    import pandas as pd
    import sklearn
    from apt.risk.data_assessment.dataset_assessment_manager import (
        DatasetAssessmentManager,
        DatasetAssessmentManagerConfig,
    )
    from apt.risk.data_assessment.dataset_attack_membership_classification import (
        DatasetAttackConfigMembershipClassification,
        DatasetAttackMembershipClassification,
    )
    from apt.risk.data_assessment.dataset_attack_membership_knn_probabilities import (
        DatasetAttackConfigMembershipKnnProbabilities,
        DatasetAttackMembershipKnnProbabilities,
    )
    from apt.risk.data_assessment.dataset_attack_whole_dataset_knn_distance import (
        DatasetAttackWholeDatasetKnnDistance,
    )
    from apt.utils.datasets import ArrayDataset

    goldens: dict[str, object] = {
        "apt_version": getattr(apt, "__version__", "0.2.1"),
        "sklearn_version": sklearn.__version__,
        "numpy_version": np.__version__,
        "seed": SEED,
        "cases": {},
    }
    for case, spec in CASES.items():
        arrays = {
            name: pd.read_csv(out / f"{case}_{name}.csv").to_numpy()
            for name in ("members", "non_members", "synthetic")
        }
        ds = {name: ArrayDataset(a) for name, a in arrays.items()}
        cats = spec["categorical_features"]
        record: dict[str, object] = {"categorical_features": cats}
        for k in (5, 3):
            knn = DatasetAttackMembershipKnnProbabilities(
                ds["members"], ds["non_members"], ds["synthetic"],
                DatasetAttackConfigMembershipKnnProbabilities(k=k), "golden", cats,
            )  # fmt: skip
            score = knn.assess_privacy()
            record[f"knn_k{k}"] = {
                "roc_auc_score": float(score.roc_auc_score),
                "average_precision_score": float(score.average_precision_score),
                "member_probabilities": score.result.member_probabilities.tolist(),
                "non_member_probabilities": score.result.non_member_probabilities.tolist(),
                "algorithm": knn.knn_learner._fit_method,
            }
        share_attack = DatasetAttackWholeDatasetKnnDistance(
            ds["members"],
            ds["non_members"],
            ds["synthetic"],
            dataset_name="golden",
            categorical_features=cats,
        )
        d_m, d_n = share_attack.calculate_distances()
        record["share"] = {
            "share": float(share_attack.assess_privacy().share),
            "ties": int(np.sum(d_m == d_n)),
            "algorithm": share_attack.knn_learner_members._fit_method,
        }
        for kind in ("LogisticRegression", "RandomForestClassifier"):
            mc = DatasetAttackMembershipClassification(
                ds["members"], ds["non_members"], ds["synthetic"],
                DatasetAttackConfigMembershipClassification(classifier_type=kind), "golden",
            )  # fmt: skip
            score = mc.assess_privacy()
            record[f"classification_{kind}"] = {
                "member_roc_auc_score": float(score.member_roc_auc_score),
                "non_member_roc_auc_score": float(score.non_member_roc_auc_score),
                "normalized_ratio": float(score.normalized_ratio),
                "synthetic_data_quality_warning": bool(
                    score.synthetic_data_quality_warning
                ),
            }
        with tempfile.TemporaryDirectory() as tmp:
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                DatasetAssessmentManager.attack_scores.clear()  # APT's class-level state
                manager = DatasetAssessmentManager(
                    DatasetAssessmentManagerConfig(persist_reports=True)
                )
                manager.assess(
                    ds["members"],
                    ds["non_members"],
                    ds["synthetic"],
                    f"golden_{case}",
                    cats,
                )
                manager.dump_all_scores_to_files()
                record["manager_csv"] = {
                    p.name: p.read_text(encoding="utf-8")
                    for p in sorted(Path(tmp).glob("*.csv"))
                }
            finally:
                os.chdir(cwd)
        goldens["cases"][case] = record  # type: ignore[index]
    (out / "goldens.json").write_text(
        json.dumps(goldens, indent=1) + "\n", encoding="utf-8"
    )


def _ensure_venv(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        tool = SHARED / "tools" / "ref-venvs.sh"
        subprocess.run(["bash", str(tool), str(venv.parent)], check=True)
    return python


def main(argv: list[str] | None = None) -> int:
    """Write the inputs, then record APT's numbers with the reference venv's python."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ref-venv",
        type=Path,
        default=DEFAULT_VENV,
        help="virtual environment with APT 0.2.1",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="folder for the inputs and goldens.json",
    )
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.inner:
        _record(args.out)
        return 0
    write_inputs(args.out)
    python = _ensure_venv(args.ref_venv)
    subprocess.run(
        [str(python), str(Path(__file__).resolve()), "--inner", "--out", str(args.out)],
        check=True,
    )
    print(f"wrote {args.out / 'goldens.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
