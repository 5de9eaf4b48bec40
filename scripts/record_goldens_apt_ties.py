# SPDX-License-Identifier: BSD-3-Clause
"""Record ai-privacy-toolkit (APT) 0.2.1 goldens on data full of exact duplicates and ties.

On continuous data no two distances are equal and any exact arithmetic gives APT's
numbers. On coarse data they are not: scikit-learn's brute-force search computes
``|x|^2 - 2 x.y + |y|^2``, whose rounding decides which of two equally distant rows
is nearer and leaves a few ulps on a duplicate row's distance. These cases make that
visible:

* ``onehot``: four standardised integer columns from six profiles plus one-hot
  categories (24 columns, brute force): many pairs differ only in their categories;
* ``integer``: 20 integer-valued columns divided by 3 (brute force), repeated rows;
* ``repeated``: 20 Gaussian columns, every row drawn from a pool of 60 (brute force);
* ``coarse_tree``: 8 coarse columns (scikit-learn's KD tree: exact differences).

Because the rounding is the BLAS kernel's (and the probabilities' ``exp`` is NumPy's,
whose AVX-512 code rounds other last bits than its other code), APT's numbers on these
cases differ from one machine to another. APT therefore runs once per OpenBLAS kernel this
machine can run (``OPENBLAS_CORETYPE`` unset, ``Haswell``, ``SandyBridge``, ``Nehalem``)
and NumPy dispatch level (``NPY_DISABLE_CPU_FEATURES`` unset, ``"X86_V4"``), and each run is
filed under fingerprints of both (``_reference.blas_fingerprint`` and ``exp_fingerprint``,
the same functions as in ``tests/conftest.py``): the test compares exactly wherever the
machine rounds as one of the recorded runs did, and everywhere with scikit-learn run in
its own process.

The inputs are written as CSV into ``tests/compat/data/apt_ties/`` and APT runs
inside its own virtual environment, writing ``goldens.json`` next to them:

    python scripts/record_goldens_apt_ties.py --ref-venv PATH/TO/APT-VENV
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _reference import blas_fingerprint, exp_fingerprint

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "tests" / "compat" / "data" / "apt_ties"
SEED = 20261122
N_ROWS = 300


def _split(pool: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Members, non-members and synthetic rows all drawn (with repeats) from ``pool``."""
    pick = lambda n: pool[rng.integers(0, len(pool), n)]  # noqa: E731
    return {
        "members": pick(N_ROWS),
        "non_members": pick(N_ROWS),
        "synthetic": pick(N_ROWS),
    }


def _onehot(rng: np.random.Generator) -> dict[str, np.ndarray]:
    # six standardised numeric profiles: many pairs differ only in their categories,
    # at the same true distance, and the expanded form rounds them differently
    profiles = (rng.integers(0, 5, size=(6, 4)) - 1.7) / 1.3

    def draw(n: int) -> np.ndarray:
        cats = [np.eye(m)[rng.integers(0, m, n)] for m in (3, 4, 5, 3, 5)]
        return np.column_stack([profiles[rng.integers(0, 6, n)], *cats])

    return {
        "members": draw(N_ROWS),
        "non_members": draw(N_ROWS),
        "synthetic": draw(N_ROWS),
    }


def _integer(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return _split(rng.integers(0, 4, size=(120, 20)) / 3.0, rng)


def _repeated(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return _split(rng.normal(size=(60, 20)) * 2.0 + 0.5, rng)


def _coarse_tree(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return _split(rng.integers(0, 3, size=(80, 8)) / 7.0, rng)


#: OpenBLAS kernels to record (unset: the one the machine picks); those the CPU cannot run
#: fall back to what it can, and runs that round alike are filed once
KERNELS = ("", "Haswell", "SandyBridge", "Nehalem")
#: NumPy dispatch levels to record (``NPY_DISABLE_CPU_FEATURES``)
NUMPY_LEVELS = ("", "X86_V4")


CASES = {
    "onehot": _onehot,
    "integer": _integer,
    "repeated": _repeated,
    "coarse_tree": _coarse_tree,
}


def write_inputs(out: Path) -> None:
    """Write every case's three tables as CSV (full float precision)."""
    import pandas as pd

    rng = np.random.default_rng(SEED)
    for case, make in CASES.items():
        for name, array in make(rng).items():
            frame = pd.DataFrame(
                array, columns=[f"c{j}" for j in range(array.shape[1])]
            )
            frame.to_csv(out / f"{case}_{name}.csv", index=False)


def _record(out: Path, dump: Path) -> None:  # pragma: no cover - runs inside APT's venv
    import apt
    import pandas as pd
    import sklearn
    from apt.risk.data_assessment.dataset_attack_membership_knn_probabilities import (
        DatasetAttackConfigMembershipKnnProbabilities,
        DatasetAttackMembershipKnnProbabilities,
    )
    from apt.risk.data_assessment.dataset_attack_whole_dataset_knn_distance import (
        DatasetAttackWholeDatasetKnnDistance,
    )
    from apt.utils.datasets import ArrayDataset
    from threadpoolctl import threadpool_info

    kernels = sorted(
        {
            str(i.get("architecture"))
            for i in threadpool_info()
            if i["user_api"] == "blas"
        }
    )
    goldens: dict[str, object] = {
        "apt_version": getattr(apt, "__version__", "0.2.1"),
        "sklearn_version": sklearn.__version__,
        "numpy_version": np.__version__,
        "seed": SEED,
        "blas": f"{blas_fingerprint()}/{exp_fingerprint()}",
        "kernels": kernels,
        "cases": {},
    }
    for case in CASES:
        arrays = {
            name: pd.read_csv(out / f"{case}_{name}.csv").to_numpy()
            for name in ("members", "non_members", "synthetic")
        }
        ds = {name: ArrayDataset(a) for name, a in arrays.items()}
        record: dict[str, object] = {}
        for k in (1, 5):
            knn = DatasetAttackMembershipKnnProbabilities(
                ds["members"], ds["non_members"], ds["synthetic"],
                DatasetAttackConfigMembershipKnnProbabilities(k=k), "golden", [],
            )  # fmt: skip
            score = knn.assess_privacy()
            record[f"knn_k{k}"] = {
                "roc_auc_score": float(score.roc_auc_score),
                "average_precision_score": float(score.average_precision_score),
                "member_probabilities": score.result.member_probabilities.tolist(),
                "non_member_probabilities": score.result.non_member_probabilities.tolist(),
                "algorithm": knn.knn_learner._fit_method,
            }
        attack = DatasetAttackWholeDatasetKnnDistance(
            ds["members"], ds["non_members"], ds["synthetic"], dataset_name="golden",
            categorical_features=[],
        )  # fmt: skip
        d_m, d_n = attack.calculate_distances()
        record["share"] = {
            "share": float(attack.assess_privacy().share),
            "distances_members": d_m.ravel().tolist(),
            "distances_non_members": d_n.ravel().tolist(),
            "ties": int(np.sum(d_m == d_n)),
            "algorithm": attack.knn_learner_members._fit_method,
        }
        goldens["cases"][case] = record  # type: ignore[index]
    dump.write_text(json.dumps(goldens), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Write the inputs, then record APT's numbers with the reference venv's python."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ref-venv", type=Path, help="virtual environment with APT 0.2.1"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="folder for the inputs and goldens.json",
    )
    parser.add_argument("--inner", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.inner:
        _record(args.out, args.inner)
        return 0
    if args.ref_venv is None:
        parser.error("--ref-venv is required (a virtual environment with APT 0.2.1)")
    write_inputs(args.out)
    python = args.ref_venv / "bin" / "python"
    runs: dict[str, dict[str, object]] = {}
    meta: dict[str, object] = {}
    for kernel, level in itertools.product(KERNELS, NUMPY_LEVELS):
        env = dict(os.environ)
        env.pop("OPENBLAS_CORETYPE", None)
        if kernel:
            env["OPENBLAS_CORETYPE"] = kernel
        env["NPY_DISABLE_CPU_FEATURES"] = level
        with tempfile.TemporaryDirectory() as tmp:
            dump = Path(tmp) / "run.json"
            subprocess.run(
                [
                    str(python),
                    str(Path(__file__).resolve()),
                    "--inner",
                    str(dump),
                    "--out",
                    str(args.out),
                ],
                check=True,
                env=env,
                stdout=subprocess.DEVNULL,
            )
            run = json.loads(dump.read_text(encoding="utf-8"))
        cases = run.pop("cases")
        blas, kernels = run.pop("blas"), run.pop("kernels")
        meta = run
        entry = runs.setdefault(blas, {"kernels": [], "numpy": [], "cases": cases})
        if entry["cases"] != cases:
            sys.exit(f"two runs that round alike ({blas}) disagree")
        entry["kernels"] = sorted({*entry["kernels"], *kernels})  # type: ignore[misc]
        entry["numpy"] = sorted({*entry["numpy"], level or "all available"})  # type: ignore[misc]
        print(
            f"OPENBLAS_CORETYPE={kernel!r} NPY_DISABLE_CPU_FEATURES={level!r}: "
            f"{kernels}, rounding {blas}",
            flush=True,
        )
    goldens = {**meta, "by_blas": runs}
    path = args.out / "goldens.json"
    path.write_text(json.dumps(goldens, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(runs)} rounding(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
