# SPDX-License-Identifier: BSD-3-Clause
"""Write the small Adult sample used by the PETsARD end-to-end test (tests/compat/petsard/data/adults_sample/).

Rows are drawn without replacement, with a fixed seed, from the Anonymeter example data in
``../shared/data/adults`` (UCI Adult, CC BY 4.0; see that folder's README): training rows
→ ``ori.csv``, control rows → ``control.csv``, CTGAN rows → ``syn.csv``. The files are
committed, so the test never needs the shared folder.

Usage::

    python scripts/make_petsard_sample.py [--adults ../shared/data/adults] [--out tests/compat/petsard/data/adults_sample]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

SIZES = {"ori": ("adults_train_reconstructed.csv", 1500), "control": ("adults_control.csv", 500),
         "syn": ("adults_syn_ctgan.csv", 1500)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adults", type=Path, default=Path("../shared/data/adults"))
    parser.add_argument(
        "--out", type=Path, default=Path("tests/compat/petsard/data/adults_sample")
    )
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for offset, (name, (source, rows)) in enumerate(SIZES.items()):
        frame = pd.read_csv(args.adults / source)
        sample = frame.sample(n=rows, random_state=args.seed + offset).reset_index(
            drop=True
        )
        sample.to_csv(args.out / f"{name}.csv", index=False, lineterminator="\n")
        print(f"{args.out / f'{name}.csv'}: {len(sample)} rows from {source}")


if __name__ == "__main__":
    main()
