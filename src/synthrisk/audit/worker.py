# SPDX-License-Identifier: BSD-3-Clause
"""A persistent generator worker: import the generator once, then train and sample run after run.

Run in the generator's own interpreter::

    python -m synthrisk.audit.worker my_module:fit_sample

(or ``python path/to/worker.py my_module:fit_sample`` where synthrisk is not installed:
this file needs only the standard library and pandas). It imports ``fit_sample`` once,
writes ``{"ready": true}`` on a line of its standard output, then answers one JSON line
per JSON line it reads on standard input, until standard input closes::

    -> {"train": "/tmp/x/train.csv", "out": "/tmp/x/synthetic.csv", "n": 500,
        "seed": 17, "format": "csv", "params": {"epochs": 50}, "text": ["zip"]}
    <- {"ok": true}
    <- {"ok": false, "error": "ValueError: ...(the traceback's last lines)"}

Each request reads the training table from ``train`` (``format``: ``"csv"`` or
``"parquet"``), calls ``fit_sample(train, n, seed, **params)`` and writes its table to
``out`` in the same format. A CSV file is read as :func:`write_table` wrote it
(:func:`read_table`): the columns named in ``text`` stay text (a code ``"01"`` is not
the number 1, ``"NA"`` is not missing) and only empty fields are missing. Whatever the
generator prints goes to standard error: standard output carries only the protocol. A
target ``named:NAME`` runs a named generator through ``_synthrisk_adapters`` (a copy of
:mod:`synthrisk.audit.adapters` next to this file) or :mod:`synthrisk.audit.adapters`.
:class:`synthrisk.audit.PythonGenerator` starts one such worker per job slot and
restarts it after a crash or a timeout; with ``worker=False`` it starts one for each
run and sends it a single request.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback
from typing import Any

__all__ = ["load", "main", "read_table", "serve", "write_table"]


def load(target: str) -> Any:
    """The callable ``module:function``, or a named generator's ``fit`` (``named:NAME``)."""
    if target.startswith("named:"):
        name = target[len("named:") :]
        try:
            adapters: Any = importlib.import_module("_synthrisk_adapters")
        except ImportError:
            adapters = importlib.import_module("synthrisk.audit.adapters")

        def fit_named(train: Any, n: int, seed: int, **params: Any) -> Any:
            return adapters.fit_named(name, train, n, seed, **params)

        return fit_named
    module_name, _, name = target.partition(":")
    return getattr(importlib.import_module(module_name), name)


def read_table(path: str, fmt: str = "csv", text: Any = ()) -> Any:
    """The table :func:`write_table` wrote to ``path``: the columns in ``text`` as text.

    CSV keeps no types, and pandas' reader guesses them: a text column of codes such as
    ``"01"`` would come back as numbers and the words ``"NA"`` or ``"null"`` as missing.
    Here the columns named in ``text`` are read as text, and only empty fields (what
    pandas writes for a missing value) are missing. Parquet keeps its types.
    """
    import pandas as pd

    if fmt == "parquet":
        return pd.read_parquet(path)
    return pd.read_csv(
        path,
        dtype=dict.fromkeys(text or (), str),
        keep_default_na=False,
        na_values=[""],
    )


def write_table(frame: Any, path: str, fmt: str = "csv") -> None:
    """Write ``frame`` to ``path`` without its index (CSV: missing values as empty fields)."""
    if fmt == "parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)


def _error_text(exc: BaseException, *, lines: int = 12) -> str:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    kept = [line for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def serve(target: str) -> int:
    """Import ``target`` once and answer requests on standard input until it closes."""
    protocol = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # the generator's prints go to standard error, never the protocol
    sys.stdout = sys.stderr
    try:
        import pandas as pd

        fit_sample = load(target)
    except BaseException as exc:
        print(_error_text(exc), file=sys.stderr, flush=True)
        return 1
    protocol.write(json.dumps({"ready": True}) + "\n")
    protocol.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            fmt = request.get("format", "csv")
            train = read_table(request["train"], fmt, request.get("text"))
            out = pd.DataFrame(
                fit_sample(
                    train,
                    int(request["n"]),
                    int(request["seed"]),
                    **dict(request.get("params") or {}),
                )
            )
            write_table(out, request["out"], fmt)
            reply: dict[str, Any] = {"ok": True}
        except (
            Exception
        ) as exc:  # the generator's failure is the run's, not the worker's
            reply = {"ok": False, "error": _error_text(exc)}
        sys.stderr.flush()
        protocol.write(json.dumps(reply) + "\n")
        protocol.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m synthrisk.audit.worker module:function``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or ":" not in args[0]:
        print(
            "usage: python -m synthrisk.audit.worker module:function "
            "(or named:NAME); requests are JSON lines on standard input",
            file=sys.stderr,
        )
        return 2
    return serve(args[0])


if __name__ == "__main__":
    sys.exit(main())
