# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark the membership family against IBM ai-privacy-toolkit (APT) 0.2.1, in one run.

Both libraries get the same pre-encoded arrays and run the two kNN attacks
(``MembershipKnnProbabilities``, ``WholeDatasetKnnDistance``), each including APT's
per-column distribution checks, exactly as a user calls them. synthrisk runs its
drop-in layer ``synthrisk.compat.apt`` (same outputs as APT) and, for reference, its
native metrics in ``mode="apt"`` (which add a DeLong interval, or the size-corrected
share with a 999-permutation p-value and a bootstrap interval). Datasets:

* **adult**: ``adults_train_reconstructed.csv`` (members), ``adults_control.csv``
  (non-members), ``adults_syn_ctgan.csv`` (synthetic), categoricals one-hot encoded
  and numbers min-max scaled over the three tables;
* **gaussian**: members, non-members and synthetic rows of ``n`` x ``d`` standard
  normal values (default 100 000 x 20), a tenth of the synthetic rows noisy copies of
  members.

    python benchmarks/bench_membership.py [--ref-venv benchmarks/.venvs/apt] [--n 100000] [--d 20] [--repeats 3]

APT runs in its own virtual environment (created with ``../shared/tools/ref-venvs.sh``
when missing). The two sides alternate ``--repeats`` times on the same arrays and the
best time of each is kept (the machine may be shared: the load average is printed next
to every run). Also measured in the same run:

* the fused Euclidean kernel alone (members against synthetic, k = 5) in GFLOP/s —
  one multiply-add per feature and pair, ``2 n_query n_reference d`` — next to the
  machine's float32 GEMM peak measured with numpy's matmul: on all cores in wall-clock
  time (4096 x 4096), and on one thread in CPU time (2048 x 2048) next to the kernel
  on one thread in CPU time (the pair least affected by other processes on a shared
  machine). On Adult, whose 0/1 columns the kernel screens as bits, the GFLOP/s are
  dense-equivalent (what a dense search would need);
* the torch backend (``backend="torch"``) on the same search when a CUDA device is
  present (otherwise the line says that it was not measured).

Prints a table with times, ratios (best of each side, and of each alternating repeat)
and the scores side by side with whether they are identical, and writes it as JSON
to ``benchmarks/out/membership.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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
DEFAULT_VENV = ROOT / "benchmarks" / ".venvs" / "apt"
DEFAULT_ADULT = SHARED / "data" / "adults"
NAMES = ("members", "non_members", "synthetic")


def _adult(folder: Path) -> dict[str, np.ndarray]:
    import pandas as pd

    frames = {
        "members": pd.read_csv(folder / "adults_train_reconstructed.csv"),
        "non_members": pd.read_csv(folder / "adults_control.csv"),
        "synthetic": pd.read_csv(folder / "adults_syn_ctgan.csv"),
    }
    stacked = pd.concat(frames.values(), keys=list(frames), names=["table", "row"])
    numeric = [c for c in stacked.columns if pd.api.types.is_numeric_dtype(stacked[c])]
    categorical = [c for c in stacked.columns if c not in numeric]
    scaled = (stacked[numeric] - stacked[numeric].min()) / (
        stacked[numeric].max() - stacked[numeric].min()
    )
    encoded = pd.concat(
        [scaled, pd.get_dummies(stacked[categorical], dtype=float)], axis=1
    )
    return {
        name: encoded.xs(name, level="table").to_numpy(dtype=np.float64)
        for name in NAMES
    }


def _gaussian(n: int, d: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    members = rng.standard_normal((n, d))
    non_members = rng.standard_normal((n, d))
    synthetic = rng.standard_normal((n, d))
    copies = n // 10
    synthetic[:copies] = members[:copies] + rng.normal(0.0, 0.3, (copies, d))
    return {"members": members, "non_members": non_members, "synthetic": synthetic}


def _run_apt(folder: Path) -> dict[str, dict[str, float]]:
    """Inside APT's venv: time its two kNN attacks on the arrays in ``folder``."""
    from apt.risk.data_assessment.dataset_attack_membership_knn_probabilities import (
        DatasetAttackMembershipKnnProbabilities,
    )
    from apt.risk.data_assessment.dataset_attack_whole_dataset_knn_distance import (
        DatasetAttackWholeDatasetKnnDistance,
    )
    from apt.utils.datasets import ArrayDataset

    ds = [ArrayDataset(np.load(folder / f"{name}.npy")) for name in NAMES]
    out = {}
    start = time.perf_counter()
    score = DatasetAttackMembershipKnnProbabilities(
        *ds, categorical_features=[]
    ).assess_privacy()
    out["knn_probabilities"] = {
        "seconds": time.perf_counter() - start,
        "roc_auc": float(score.roc_auc_score),
        "average_precision": float(score.average_precision_score),
    }
    start = time.perf_counter()
    score = DatasetAttackWholeDatasetKnnDistance(
        *ds, categorical_features=[]
    ).assess_privacy()
    out["dcr_share"] = {
        "seconds": time.perf_counter() - start,
        "share": float(score.share),
    }
    return out


def _run_synthrisk(arrays: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    import pandas as pd

    from synthrisk.compat.apt import (
        ArrayDataset,
        DatasetAttackMembershipKnnProbabilities,
        DatasetAttackWholeDatasetKnnDistance,
    )
    from synthrisk.metrics import DCRShare, MembershipKnnProbabilities

    # compile the numba kernels outside the timings (600 rows: scikit-learn's full
    # 256-row chunks go through the fused kernel, the rest through BLAS)
    tiny = [ArrayDataset(arrays[name][:600]) for name in NAMES]
    DatasetAttackMembershipKnnProbabilities(*tiny).assess_privacy()
    DatasetAttackWholeDatasetKnnDistance(*tiny).assess_privacy()
    small = [
        pd.DataFrame(arrays[name][:600])
        for name in ("members", "synthetic", "non_members")
    ]
    DCRShare(mode="apt").compute(*small)

    ds = [ArrayDataset(arrays[name]) for name in NAMES]
    out = {}
    start = time.perf_counter()
    score = DatasetAttackMembershipKnnProbabilities(*ds).assess_privacy()
    out["knn_probabilities"] = {
        "seconds": time.perf_counter() - start,
        "roc_auc": score.roc_auc_score,
        "average_precision": score.average_precision_score,
    }
    start = time.perf_counter()
    share = DatasetAttackWholeDatasetKnnDistance(*ds).assess_privacy()
    out["dcr_share"] = {"seconds": time.perf_counter() - start, "share": share.share}

    frames = [
        pd.DataFrame(arrays[name]) for name in ("members", "synthetic", "non_members")
    ]
    frames = [f.rename(columns=str) for f in frames]
    start = time.perf_counter()
    result = MembershipKnnProbabilities(mode="apt").compute(*frames)
    out["metric_knn_probabilities"] = {
        "seconds": time.perf_counter() - start,
        "roc_auc": result.score,
    }
    start = time.perf_counter()
    result = DCRShare(mode="apt").compute(*frames)
    out["metric_dcr_share"] = {
        "seconds": time.perf_counter() - start,
        "share": result.score,
        "size_corrected_share": result.breakdown["size_corrected_share"],
        "p_value": result.breakdown["p_value"],
    }
    return out


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def _gemm_peak(repeats: int = 3) -> dict[str, float]:
    """float32 GEMM rates of numpy's BLAS: both cores (wall clock) and one thread (CPU time)."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a = rng.standard_normal((4096, 4096), dtype=np.float32)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        np.matmul(a, a)
        best = min(best, time.perf_counter() - start)
    b = a[:2048, :2048].copy()
    best_cpu = float("inf")
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(repeats):
            start = time.process_time()
            np.matmul(b, b)
            best_cpu = min(best_cpu, time.process_time() - start)
    return {
        "wall": 2 * 4096**3 / best / 1e9,
        "one_thread_cpu": 2 * 2048**3 / best_cpu / 1e9,
    }


def _kernel(arrays: dict[str, np.ndarray], repeats: int) -> dict[str, Any]:
    """The fused Euclidean kernel alone (both cores, and one thread in CPU time), and torch on CUDA."""
    import numba

    from synthrisk.neighbors import nearest_neighbors

    query, reference = arrays["members"], arrays["synthetic"]
    flops = 2.0 * query.shape[0] * reference.shape[0] * query.shape[1]
    nearest_neighbors(query[:100], reference[:1000], k=5, distance="euclidean")
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fused = nearest_neighbors(query, reference, k=5, distance="euclidean")
        best = min(best, time.perf_counter() - start)
    # one thread, CPU time: what the shared machine's load does not change much
    part = query[: max(1, min(query.shape[0], 8000))]
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        best_cpu = float("inf")
        for _ in range(repeats):
            start = time.process_time()
            nearest_neighbors(part, reference, k=5, distance="euclidean")
            best_cpu = min(best_cpu, time.process_time() - start)
    finally:
        numba.set_num_threads(threads)
    part_flops = 2.0 * part.shape[0] * reference.shape[0] * query.shape[1]
    out: dict[str, Any] = {
        "seconds": best,
        "gflops": flops / best / 1e9,
        "one_thread_cpu_seconds": best_cpu,
        "one_thread_rows": part.shape[0],
        "one_thread_gflops": part_flops / best_cpu / 1e9,
    }
    try:
        import torch
    except ImportError:
        out["cuda"] = "torch not installed: not measured"
        return out
    if not torch.cuda.is_available():
        out["cuda"] = "no CUDA device: not measured"
        return out
    nearest_neighbors(
        query[:100], reference, k=5, distance="euclidean", backend="torch"
    )
    best_gpu = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        gpu = nearest_neighbors(
            query, reference, k=5, distance="euclidean", backend="torch"
        )
        best_gpu = min(best_gpu, time.perf_counter() - start)
    out["cuda"] = torch.cuda.get_device_name(0)
    out["cuda_seconds"] = best_gpu
    out["cuda_identical"] = bool(
        np.array_equal(gpu.indices, fused.indices)
        and np.array_equal(gpu.distances, fused.distances)
    )
    return out


def _ensure_venv(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run(
            ["bash", str(SHARED / "tools" / "ref-venvs.sh"), str(venv.parent)],
            check=True,
        )
    return python


def main(argv: list[str] | None = None) -> int:
    """Run both libraries on each dataset and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ref-venv",
        type=Path,
        default=DEFAULT_VENV,
        help="virtual environment with APT 0.2.1",
    )
    parser.add_argument(
        "--adult-dir",
        type=Path,
        default=DEFAULT_ADULT,
        help="folder of the Adult CSV files",
    )
    parser.add_argument(
        "--n", type=int, default=100_000, help="rows of each Gaussian table"
    )
    parser.add_argument(
        "--d", type=int, default=20, help="columns of the Gaussian tables"
    )
    parser.add_argument(
        "--datasets", default="adult,gaussian", help="comma-separated: adult, gaussian"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs of each side; the best is kept"
    )
    parser.add_argument("--run-apt", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_apt is not None:
        print(json.dumps(_run_apt(args.run_apt)))
        return 0

    python = _ensure_venv(args.ref_venv)
    peaks = _gemm_peak()
    peak, peak_one = peaks["wall"], peaks["one_thread_cpu"]
    print(
        f"float32 GEMM peak (numpy matmul): {peak:.0f} GFLOP/s on all cores (4096^2, wall clock), "
        f"{peak_one:.0f} GFLOP per CPU-second on one thread (2048^2) ({_load()})"
    )
    results: dict[str, object] = {
        "gemm_peak_gflops": peak,
        "gemm_one_thread_gflops": peak_one,
    }
    for dataset in args.datasets.split(","):
        arrays = (
            _adult(args.adult_dir) if dataset == "adult" else _gaussian(args.n, args.d)
        )
        shape = {name: list(a.shape) for name, a in arrays.items()}
        runs: dict[str, list[dict]] = {"apt": [], "synthrisk": []}
        loads: list[str] = []
        with tempfile.TemporaryDirectory() as tmp:
            for name, array in arrays.items():
                np.save(Path(tmp) / f"{name}.npy", array)
            for repeat in range(args.repeats):
                loads.append(_load())
                proc = subprocess.run(
                    [str(python), str(Path(__file__).resolve()), "--run-apt", tmp],
                    check=True, capture_output=True, text=True,
                )  # fmt: skip
                runs["apt"].append(json.loads(proc.stdout.strip().splitlines()[-1]))
                loads.append(_load())
                runs["synthrisk"].append(_run_synthrisk(arrays))
                print(
                    f"  {dataset} repeat {repeat + 1}: {loads[-2]} (APT), {loads[-1]} (synthrisk)",
                    flush=True,
                )
        apt = {
            key: min((r[key] for r in runs["apt"]), key=lambda v: v["seconds"])
            for key in runs["apt"][0]
        }
        ours = {
            key: min((r[key] for r in runs["synthrisk"]), key=lambda v: v["seconds"])
            for key in runs["synthrisk"][0]
        }
        kernel = _kernel(arrays, args.repeats)
        results[dataset] = {
            "shape": shape, "apt": apt, "synthrisk": ours, "runs": runs, "loads": loads,
            "kernel": kernel,
        }  # fmt: skip
        print(
            f"\n{dataset}: members {shape['members']}, non-members {shape['non_members']}, synthetic {shape['synthetic']}"
        )
        print(
            f"{'attack':<22}{'APT s':>9}{'synthrisk s':>13}{'ratio':>8}   scores (APT | synthrisk)"
        )
        knn_a, knn_s = apt["knn_probabilities"], ours["knn_probabilities"]
        share_a, share_s = apt["dcr_share"], ours["dcr_share"]
        diff_knn = max(
            abs(knn_a["roc_auc"] - knn_s["roc_auc"]),
            abs(knn_a["average_precision"] - knn_s["average_precision"]),
        )
        diff_share = abs(share_a["share"] - share_s["share"])
        print(
            f"{'kNN probabilities':<22}{knn_a['seconds']:>9.2f}{knn_s['seconds']:>13.2f}"
            f"{knn_a['seconds'] / knn_s['seconds']:>7.1f}x   AUC {knn_a['roc_auc']:.12f} | {knn_s['roc_auc']:.12f}, "
            f"AP {knn_a['average_precision']:.12f} | {knn_s['average_precision']:.12f}  max |difference| {diff_knn:.1e}"
        )
        print(
            f"{'whole-dataset share':<22}{share_a['seconds']:>9.2f}{share_s['seconds']:>13.2f}"
            f"{share_a['seconds'] / share_s['seconds']:>7.1f}x   share {share_a['share']:.12f} | {share_s['share']:.12f}"
            f"  |difference| {diff_share:.1e}"
        )
        ratios = {
            attack: [
                a[attack]["seconds"] / o[attack]["seconds"]
                for a, o in zip(runs["apt"], runs["synthrisk"], strict=True)
            ]
            for attack in ("knn_probabilities", "dcr_share")
        }
        results[dataset]["ratios_per_repeat"] = ratios  # type: ignore[index]
        print(
            "ratio of each alternating repeat: "
            + "; ".join(
                f"{name} " + ", ".join(f"{r:.1f}x" for r in values)
                for name, values in ratios.items()
            )
        )
        mk, md = ours["metric_knn_probabilities"], ours["metric_dcr_share"]
        print(
            f"native metrics (mode='apt'): membership_knn_probabilities {mk['seconds']:.2f} s "
            f"(AUC {mk['roc_auc']:.12f}); dcr_share {md['seconds']:.2f} s (share {md['share']:.12f}, "
            f"size-corrected {md['size_corrected_share']:.4f}, p = {md['p_value']:.3f})"
        )
        dense = (
            " (dense-equivalent: 0/1 columns are screened as bits)"
            if dataset == "adult"
            else ""
        )
        print(
            f"fused Euclidean kernel (members x synthetic, k=5): {kernel['seconds']:.2f} s, "
            f"{kernel['gflops']:.1f} GFLOP/s = {100 * kernel['gflops'] / peak:.0f} % of the all-core float32 GEMM peak; "
            f"one thread ({kernel['one_thread_rows']} members): {kernel['one_thread_gflops']:.1f} GFLOP per CPU-second "
            f"= {100 * kernel['one_thread_gflops'] / peak_one:.0f} % of the one-thread GEMM rate{dense}"
        )
        if "cuda_seconds" in kernel:
            print(
                f"torch backend on {kernel['cuda']}: {kernel['cuda_seconds']:.2f} s, "
                f"identical neighbours: {kernel['cuda_identical']}"
            )
        else:
            print(f"torch backend on CUDA: {kernel['cuda']}")
    out = ROOT / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "membership.json").write_text(
        json.dumps(results, indent=1) + "\n", encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
