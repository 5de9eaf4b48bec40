# SPDX-License-Identifier: BSD-3-Clause
"""Generator adapters: callables, commands and SDV (with a fake SDV module)."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pandas as pd
import pytest

from synthrisk.audit.generators import (
    CommandGenerator,
    GeneratorError,
    SDVGenerator,
    as_fit_sample,
    describe_generator,
)
from synthrisk.exceptions import MissingDependencyError, ParameterError, SynthriskError

SCRIPT = """
import argparse, csv, random
p = argparse.ArgumentParser()
p.add_argument("--train"); p.add_argument("--out"); p.add_argument("--rows", type=int)
p.add_argument("--seed", type=int); p.add_argument("--fail", action="store_true")
p.add_argument("--no-output", action="store_true")
a = p.parse_args()
if a.fail:
    raise SystemExit("model diverged")
with open(a.train, newline="") as f:
    rows = list(csv.reader(f))
header, body = rows[0], rows[1:]
g = random.Random(a.seed)
if not a.no_output:
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(g.choice(body) for _ in range(a.rows))
"""


@pytest.fixture
def script(tmp_path: Path) -> str:
    folder = tmp_path / "my gen"  # a space in the path stays one argument
    folder.mkdir()
    path = folder / "gen.py"
    path.write_text(SCRIPT, encoding="utf-8")
    return f"{sys.executable} '{path}' --train {{train}} --out {{out}} --rows {{n}} --seed {{seed}}"


@pytest.fixture
def train() -> pd.DataFrame:
    return pd.DataFrame({"x": [1.5, 2.5, 3.5, 4.5], "c": ["a", "b", "a", "c"]})


def test_command_generator_round_trips_csv_and_is_seeded(script: str, train) -> None:
    gen = CommandGenerator(script)
    out = gen(train, 7, 3)
    assert list(out.columns) == ["x", "c"]
    assert len(out) == 7
    assert set(out["x"]) <= set(train["x"])
    pd.testing.assert_frame_equal(out, gen(train, 7, 3))


def test_command_generator_non_zero_exit_names_the_command(script: str, train) -> None:
    gen = CommandGenerator(script + " --fail")
    with pytest.raises(
        GeneratorError,
        match=r"exited with status 1; its standard error ends with:\nmodel diverged",
    ) as info:
        gen(train, 3, 0)
    assert "--fail" in str(info.value)
    assert isinstance(info.value, SynthriskError)


def test_command_generator_missing_output_is_an_error(script: str, train) -> None:
    with pytest.raises(GeneratorError, match=r"wrote no table to \{out\}"):
        CommandGenerator(script + " --no-output")(train, 3, 0)


def test_command_generator_unknown_program(train) -> None:
    with pytest.raises(GeneratorError, match="not found"):
        CommandGenerator("no-such-generator-xyz {train} {out}")(train, 3, 0)


def test_command_generator_timeout(train) -> None:
    gen = CommandGenerator(
        f"{sys.executable} -c 'import time; time.sleep(5)' {{train}} {{out}}",
        timeout=0.5,
    )
    with pytest.raises(GeneratorError, match=r"ran past `timeout`=0.5 s"):
        gen(train, 3, 0)


@pytest.mark.parametrize(
    ("template", "match"),
    [
        ("gen --out {out}", r"must contain \{train\}"),
        ("gen --train {train}", r"must contain \{out\}"),
        ("gen {train} {out} {rows}", "Use only the placeholders"),
        ("", "non-empty command line"),
    ],
)
def test_command_generator_checks_its_template(template: str, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        CommandGenerator(template)


def test_sdv_generator_without_sdv_says_how_to_install(monkeypatch, train) -> None:
    monkeypatch.setitem(sys.modules, "sdv", None)
    monkeypatch.setitem(sys.modules, "sdv.single_table", None)
    with pytest.raises(
        MissingDependencyError, match=r"pip install 'synthrisk\[audit\]'"
    ):
        SDVGenerator("gaussian_copula")(train, 5, 0)


def _fake_sdv(
    monkeypatch, *, with_new_metadata: bool, version_2: bool = False
) -> list[tuple[str, object]]:
    calls: list[tuple[str, object]] = []

    class Metadata2:  # SDV 2.x: a mapping of table names to frames, in and out
        @classmethod
        def detect_from_dataframes(cls, data: dict[str, pd.DataFrame]) -> Metadata2:
            calls.append(("detect2", tuple(data)))
            return cls()

    class Synthesizer2:
        def __init__(self, metadata: object, **params: object) -> None:
            calls.append(("init", params))

        def fit(self, data: object) -> None:
            if not isinstance(data, dict):  # SDV 2.0's InvalidDataTypeError
                msg = "The `data` parameter must be a dictionary"
                raise TypeError(msg)
            calls.append(("fit", len(data["table"])))
            self.data = data["table"]

        def sample(self, num_rows: int) -> dict[str, pd.DataFrame]:
            calls.append(("sample", num_rows))
            return {"table": self.data.sample(num_rows, replace=True, random_state=0)}

    class FakeMetadata:
        @classmethod
        def detect_from_dataframe(cls, data: pd.DataFrame) -> FakeMetadata:
            calls.append(("detect", tuple(data.columns)))
            return cls()

    class OldMetadata:
        def detect_from_dataframe(self, data: pd.DataFrame) -> None:
            calls.append(("old-detect", tuple(data.columns)))

    class FakeSynthesizer:
        def __init__(self, metadata: object, **params: object) -> None:
            calls.append(("init", params))
            self.metadata = metadata

        def fit(self, data: pd.DataFrame) -> None:
            calls.append(("fit", len(data)))
            self.data = data

        def sample(self, num_rows: int) -> pd.DataFrame:
            calls.append(("sample", num_rows))
            return self.data.sample(num_rows, replace=True, random_state=0)

    sdv = types.ModuleType("sdv")
    single = types.ModuleType("sdv.single_table")
    single.CTGANSynthesizer = Synthesizer2 if version_2 else FakeSynthesizer  # type: ignore[attr-defined]
    meta = types.ModuleType("sdv.metadata")
    if version_2:
        meta.Metadata = Metadata2  # type: ignore[attr-defined]
    elif with_new_metadata:
        meta.Metadata = FakeMetadata  # type: ignore[attr-defined]
    meta.SingleTableMetadata = OldMetadata  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sdv", sdv)
    monkeypatch.setitem(sys.modules, "sdv.single_table", single)
    monkeypatch.setitem(sys.modules, "sdv.metadata", meta)
    return calls


@pytest.mark.parametrize("with_new_metadata", [True, False])
def test_sdv_generator_fits_a_single_table_and_samples(
    monkeypatch, train, with_new_metadata: bool
) -> None:
    calls = _fake_sdv(monkeypatch, with_new_metadata=with_new_metadata)
    out = as_fit_sample("sdv:ctgan")(train, 6, 1)
    assert len(out) == 6
    detect = "detect" if with_new_metadata else "old-detect"
    assert calls == [
        (detect, ("x", "c")),
        ("init", {}),
        ("fit", 4),
        ("sample", 6),
    ]
    calls.clear()
    SDVGenerator("ctgan", {"epochs": 5})(train, 2, 1)
    assert ("init", {"epochs": 5}) in calls


def test_sdv_2_takes_and_returns_one_table_mappings(monkeypatch, train) -> None:
    calls = _fake_sdv(monkeypatch, with_new_metadata=True, version_2=True)
    out = as_fit_sample("sdv:ctgan")(train, 5, 1)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["x", "c"]
    assert len(out) == 5
    assert calls == [("detect2", ("table",)), ("init", {}), ("fit", 4), ("sample", 5)]


def test_sdv_generator_refuses_unknown_synthesizers() -> None:
    with pytest.raises(ParameterError, match="`synthesizer` must be one of"):
        SDVGenerator("par")


def test_as_fit_sample_and_descriptions() -> None:
    def fit_sample(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        return train

    assert as_fit_sample(fit_sample) is fit_sample
    assert describe_generator(fit_sample).endswith("fit_sample")
    assert describe_generator(as_fit_sample("gen {train} {out}")) == (
        "command: gen {train} {out}"
    )
    assert describe_generator(SDVGenerator("tvae")) == "sdv: TVAESynthesizer"
    with pytest.raises(ParameterError, match="`generator` must be a callable"):
        as_fit_sample(3.5)
