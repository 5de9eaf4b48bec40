# SPDX-License-Identifier: BSD-3-Clause
"""The persistent generator worker (``python -m synthrisk.audit.worker``): its protocol."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
from tests.audit._generators import population

from synthrisk.audit.worker import load, read_table, write_table

TRAIN = population(30, 1)

MODULE = """
import pandas as pd


def chatty(train, n, seed):
    print("a line on standard output must not break the protocol")
    return train.sample(n, replace=True, random_state=seed).reset_index(drop=True)
"""


def test_the_worker_entry_point_speaks_json_lines(tmp_path: Path) -> None:
    (tmp_path / "slowgen.py").write_text(MODULE, encoding="utf-8")
    counted = tmp_path
    TRAIN.to_csv(tmp_path / "train.csv", index=False)
    request = {
        "train": str(tmp_path / "train.csv"),
        "out": str(tmp_path / "out.csv"),
        "n": 3,
        "seed": 1,
        "format": "csv",
    }
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(counted), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-m", "synthrisk.audit.worker", "slowgen:chatty"],
        input=json.dumps(request) + "\n" + json.dumps({**request, "n": "x"}) + "\n",
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0] == {"ready": True}
    assert lines[1] == {"ok": True}
    assert lines[2]["ok"] is False
    assert "ValueError" in lines[2]["error"]
    assert "must not break the protocol" in done.stderr
    assert len(pd.read_csv(tmp_path / "out.csv")) == 3


def test_load_finds_a_function_and_a_named_generator() -> None:
    assert load("json:dumps") is json.dumps
    assert callable(load("named:dpmm:mst"))  # imported only when called


def test_the_worker_refuses_a_bad_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "synthrisk.audit.worker"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=False,
        timeout=120,
    )
    assert done.returncode == 2
    assert "usage: python -m synthrisk.audit.worker module:function" in done.stderr


def test_read_table_reads_back_what_write_table_wrote(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "code": pd.Series(["01", "NA", "", None, "null"], dtype=object),
            "x": [0.5, float("nan"), 3.0, -1.0, 2.0],
            "k": [7, 8, 9, 10, 11],
        }
    )
    path = str(tmp_path / "t.csv")
    write_table(frame, path)
    back = read_table(path, "csv", ["code", "not_a_column"])
    # the text stays text; only empty fields are missing (an empty text is one)
    assert back["code"].tolist()[:2] == ["01", "NA"]
    assert back["code"].isna().tolist() == [False, False, True, True, False]
    assert back["code"].iloc[4] == "null"
    assert back["x"].isna().tolist() == [False, True, False, False, False]
    assert back["k"].tolist() == [7, 8, 9, 10, 11]
    # pandas' own guess turns the codes into numbers and "NA" into a missing value
    guessed = pd.read_csv(path)
    assert guessed["code"].iloc[0] == 1
    assert pd.isna(guessed["code"].iloc[1])
