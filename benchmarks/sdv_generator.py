# SPDX-License-Identifier: BSD-3-Clause
"""An SDV synthesizer as a command, for auditing SDV from its own Python environment.

SDV 2.x requires pandas < 3 while synthrisk runs on pandas 3, so the audit runs SDV in
another virtual environment through the command adapter::

    synthrisk audit --generator-cmd \
        "path/to/sdv-venv/bin/python benchmarks/sdv_generator.py --train {train} --out {out} --rows {n} --seed {seed} --synthesizer gaussian_copula" ...

The script reads the training rows (CSV), fits the synthesizer on single-table metadata
detected from the data (SDV 2.x: ``Metadata.detect_from_dataframes({"table": df})`` and
``fit({"table": df})``, whose ``sample`` returns ``{"table": df}``; SDV 1.x: one frame),
samples ``--rows`` rows and writes them as CSV. Numpy's, Python's and torch's global generators are seeded with ``--seed``.
"""

from __future__ import annotations

import argparse
import random

SYNTHESIZERS = {
    "gaussian_copula": "GaussianCopulaSynthesizer",
    "ctgan": "CTGANSynthesizer",
    "tvae": "TVAESynthesizer",
    "copula_gan": "CopulaGANSynthesizer",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument(
        "--synthesizer", choices=sorted(SYNTHESIZERS), default="gaussian_copula"
    )
    parser.add_argument(
        "--epochs", type=int, default=50, help="CTGAN / TVAE / CopulaGAN epochs"
    )
    args = parser.parse_args()

    import numpy as np
    import pandas as pd
    import sdv.single_table
    from sdv.metadata import Metadata

    random.seed(args.seed)
    np.random.seed(args.seed & 0xFFFFFFFF)  # noqa: NPY002 - SDV samples from numpy's global state
    try:
        import torch

        torch.manual_seed(args.seed)
    except ImportError:
        pass
    train = pd.read_csv(args.train)
    cls = getattr(sdv.single_table, SYNTHESIZERS[args.synthesizer])
    options = {} if args.synthesizer == "gaussian_copula" else {"epochs": args.epochs}
    if hasattr(Metadata, "detect_from_dataframe"):  # SDV 1.x: one table, one frame
        synthesizer = cls(Metadata.detect_from_dataframe(train), **options)
        synthesizer.fit(train)
    else:  # SDV 2.x: a mapping of one table name to its frame, in and out
        synthesizer = cls(Metadata.detect_from_dataframes({"table": train}), **options)
        synthesizer.fit({"table": train})
    out = synthesizer.sample(num_rows=args.rows)
    out = out["table"] if isinstance(out, dict) else out
    out.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
