# SPDX-License-Identifier: BSD-3-Clause
"""The other-interpreter adapter and the named generators (synthpop, dpmm, smartnoise-synth).

The packages are not installed here: fake modules that mimic their documented APIs are
put in ``sys.modules`` (in this process) or on the other interpreter's path.
"""

from __future__ import annotations

import os
import sys
import textwrap
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from tests.audit._generators import population

from synthrisk.audit import (
    NAMED_GENERATORS,
    NamedGenerator,
    PythonGenerator,
    as_fit_sample,
    audit,
)
from synthrisk.audit.generators import cache_identity, describe_generator
from synthrisk.exceptions import GeneratorError, MissingDependencyError, ParameterError

TRAIN = population(30, 1)

TINY = """
import pandas as pd

def fit_sample(train, n, seed, shift=0.0):
    out = train.sample(n, replace=True, random_state=seed).reset_index(drop=True)
    out["x"] = out["x"] + shift
    return out

def broken(train, n, seed):
    raise RuntimeError("the model diverged")

def sleepy(train, n, seed):
    import time
    time.sleep(60)
"""


@pytest.fixture
def module_dir(tmp_path: Path) -> Path:
    (tmp_path / "tinygen.py").write_text(TINY, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("data_format", ["csv", "parquet"])
def test_python_generator_runs_a_function_in_another_interpreter(
    module_dir: Path, data_format: str
) -> None:
    gen = PythonGenerator(
        sys.executable,
        "tinygen:fit_sample",
        params={"shift": 100.0},
        path=(str(module_dir),),
        data_format=data_format,
    )
    out = gen(TRAIN, 12, 3)
    assert len(out) == 12
    assert list(out.columns) == list(TRAIN.columns)
    assert (out["x"] > 90).all()  # the params reached the function
    again = gen(TRAIN, 12, 3)
    pd.testing.assert_frame_equal(out, again)
    assert describe_generator(gen).startswith("python: tinygen:fit_sample in ")


@pytest.mark.parametrize("worker", [True, False])
def test_python_generator_reports_the_error_and_hangs(
    module_dir: Path, worker: bool
) -> None:
    gen = PythonGenerator(
        sys.executable, "tinygen:broken", path=(str(module_dir),), worker=worker
    )
    with pytest.raises(GeneratorError, match="failed: Traceback") as info:
        gen(TRAIN, 5, 0)
    assert str(info.value).endswith("RuntimeError: the model diverged")
    missing = PythonGenerator(sys.executable, "no_such_module:f", worker=worker)
    with pytest.raises(GeneratorError, match="exited with status 1") as info:
        missing(TRAIN, 5, 0)
    assert "No module named 'no_such_module'" in str(info.value)  # its traceback
    sleepy = PythonGenerator(
        sys.executable,
        "tinygen:sleepy",
        path=(str(module_dir),),
        timeout=1.0,
        worker=worker,
    )
    tick = time.perf_counter()
    with pytest.raises(GeneratorError, match="ran past `timeout`=1 s"):
        sleepy(TRAIN, 5, 0)
    assert time.perf_counter() - tick < 30
    gen.close()


CODES = """
import sys

import pandas as pd


def echo(train, n, seed):
    # what the other interpreter was given: no synthrisk, the codes as text
    assert "synthrisk" not in sys.modules, sorted(sys.modules)
    assert train["zip"].tolist()[:3] == ["01", "NA", "007"], train["zip"].tolist()
    assert pd.isna(train["zip"].iloc[3])
    assert train["x"].tolist()[:3] == [1.5, 2.0, -3.25]
    assert pd.isna(train["x"].iloc[3])
    assert train["level"].tolist() == [3, 1, 3, 2]  # categories that are numbers
    out = train.copy()
    out["zip"] = out["zip"].fillna("null")
    return out.head(n)
"""


@pytest.mark.parametrize("worker", [True, False])
def test_text_columns_stay_text_both_ways(tmp_path: Path, worker: bool) -> None:
    # CSV keeps no types: "01" must not come back as the number 1, "NA" or "null" as
    # missing; the generator sees the table as it was given
    (tmp_path / "codes.py").write_text(CODES, encoding="utf-8")
    train = pd.DataFrame(
        {
            "zip": pd.Series(["01", "NA", "007", None], dtype=object),
            "x": [1.5, 2.0, -3.25, np.nan],
            "n": [1, 2, 3, 4],
            "flag": [True, False, True, True],
            "level": pd.Categorical([3, 1, 3, 2]),
        }
    )
    gen = PythonGenerator(
        sys.executable, "codes:echo", path=(str(tmp_path),), worker=worker
    )
    try:
        out = gen(train, 4, 0)
    finally:
        gen.close()
    assert out["zip"].tolist() == ["01", "NA", "007", "null"]
    assert out["x"].tolist()[:3] == [1.5, 2.0, -3.25]
    assert out["x"].isna().tolist() == [False, False, False, True]
    assert out["n"].tolist() == [1, 2, 3, 4]
    assert out["flag"].tolist() == [True, False, True, True]
    assert out["level"].tolist() == [3, 1, 3, 2]
    assert pd.api.types.is_integer_dtype(out["n"])
    assert pd.api.types.is_bool_dtype(out["flag"])


def test_python_generator_checks_its_arguments() -> None:
    with pytest.raises(ParameterError, match="not an interpreter"):
        PythonGenerator("/no/such/python", "m:f")
    with pytest.raises(ParameterError, match="'module:function'"):
        PythonGenerator(sys.executable, "justaname")
    with pytest.raises(ParameterError, match="`data_format`"):
        PythonGenerator(sys.executable, "m:f", data_format="xlsx")
    with pytest.raises(ParameterError, match="JSON-safe"):
        PythonGenerator(sys.executable, "m:f", params={"x": object()})


def test_the_audit_runs_another_interpreter(module_dir: Path) -> None:
    real, holdout = population(40, 3), population(120, 4)
    gen = PythonGenerator(sys.executable, "tinygen:fit_sample", path=(str(module_dir),))
    result = audit(
        gen,
        real,
        holdout,
        n_targets=3,
        n_runs=4,
        train_size=30,
        attacks=["dcr"],
        n_jobs=2,
        run_timeout=120,
    )
    assert result.runs["completed"] == 4
    assert result.runs["failed"] == 0


# --- fake packages, after their documented APIs -----------------------------------


class _Recorder:
    calls: list[tuple[str, Any]]

    def __init__(self) -> None:
        self.calls = []


def _fake_synthpop(rec: _Recorder) -> types.ModuleType:
    """python-synthpop's README: MissingDataHandler, DataProcessor, CARTMethod."""
    mod = types.ModuleType("synthpop")

    class MissingDataHandler:
        def get_column_dtypes(self, df: pd.DataFrame) -> dict[str, str]:
            return {c: str(t) for c, t in df.dtypes.items()}

        def detect_missingness(self, df: pd.DataFrame) -> dict[str, str]:
            return {}

        def apply_imputation(self, df: pd.DataFrame, missing: dict) -> pd.DataFrame:
            return df

    class DataProcessor:
        def __init__(self, metadata: dict) -> None:
            self.metadata = metadata

        def preprocess(self, df: pd.DataFrame) -> pd.DataFrame:
            return df

        def postprocess(self, df: pd.DataFrame) -> pd.DataFrame:
            return df

    class CARTMethod:
        def __init__(self, metadata: dict, **kw: Any) -> None:
            rec.calls.append(("CARTMethod", kw))

        def fit(self, df: pd.DataFrame) -> None:
            self.df = df

        def sample(self, n: int) -> pd.DataFrame:
            return self.df.sample(n, replace=True, random_state=0)

    mod.MissingDataHandler = MissingDataHandler  # type: ignore[attr-defined]
    mod.DataProcessor = DataProcessor  # type: ignore[attr-defined]
    mod.CARTMethod = CARTMethod  # type: ignore[attr-defined]
    return mod


def _fake_dpmm(rec: _Recorder) -> tuple[types.ModuleType, types.ModuleType]:
    """dpmm 0.1.9: MSTPipeline(epsilon, ...).fit(df, domain, random_state).generate(n_records, random_state)."""
    root = types.ModuleType("dpmm")
    pipelines = types.ModuleType("dpmm.pipelines")

    def make(name: str) -> type:
        class Pipeline:
            def __init__(self, **kw: Any) -> None:
                rec.calls.append((name, kw))

            def fit(
                self, df: pd.DataFrame, domain: Any = None, random_state: Any = None
            ) -> None:
                rec.calls.append(("fit", (domain, random_state)))
                self.df = df

            def generate(
                self, n_records: int, random_state: Any = None
            ) -> pd.DataFrame:
                rec.calls.append(("generate", random_state))
                g = np.random.default_rng(random_state)
                return self.df.iloc[g.integers(0, len(self.df), n_records)]

        return Pipeline

    for name in ("MSTPipeline", "AIMPipeline", "PrivBayesPipeline"):
        setattr(pipelines, name, make(name))
    root.pipelines = pipelines  # type: ignore[attr-defined]
    return root, pipelines


def _fake_snsynth(rec: _Recorder) -> types.ModuleType:
    """smartnoise-synth's README: Synthesizer.create(name, epsilon).fit(df, preprocessor_eps).sample(n)."""
    mod = types.ModuleType("snsynth")

    class Synthesizer:
        @classmethod
        def create(cls, name: str, **kw: Any) -> Synthesizer:
            rec.calls.append(("create", (name, kw)))
            return cls()

        def fit(self, df: pd.DataFrame, *, preprocessor_eps: float) -> None:
            rec.calls.append(("fit", preprocessor_eps))
            self.df = df

        def sample(self, n: int) -> pd.DataFrame:
            return self.df.head(n)

    mod.Synthesizer = Synthesizer  # type: ignore[attr-defined]
    return mod


def test_synthpop_cart_follows_the_documented_pipeline(monkeypatch) -> None:
    rec = _Recorder()
    monkeypatch.setitem(sys.modules, "synthpop", _fake_synthpop(rec))
    gen = as_fit_sample("synthpop:cart")
    assert isinstance(gen, NamedGenerator)
    out = gen(TRAIN, 7, 11)
    assert len(out) == 7
    assert rec.calls == [("CARTMethod", {"random_state": 11})]
    NamedGenerator("synthpop:cart", {"minibucket": 5})(TRAIN, 3, 2)
    assert rec.calls[-1] == ("CARTMethod", {"random_state": 2, "minibucket": 5})


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("dpmm:mst", "MSTPipeline"),
        ("dpmm:aim", "AIMPipeline"),
        ("dpmm:privbayes", "PrivBayesPipeline"),
    ],
)
def test_dpmm_pipelines(monkeypatch, name: str, cls: str) -> None:
    rec = _Recorder()
    root, pipelines = _fake_dpmm(rec)
    monkeypatch.setitem(sys.modules, "dpmm", root)
    monkeypatch.setitem(sys.modules, "dpmm.pipelines", pipelines)
    out = NamedGenerator(name, {"epsilon": 0.5, "domain": {"x": [0, 1]}})(TRAIN, 9, 1)
    assert len(out) == 9
    assert rec.calls == [
        (cls, {"epsilon": 0.5}),
        ("fit", ({"x": [0, 1]}, 1)),
        ("generate", 1),
    ]
    rec.calls.clear()
    NamedGenerator(name)(TRAIN, 2, 7)
    assert rec.calls == [(cls, {"epsilon": 1.0}), ("fit", (None, 7)), ("generate", 7)]


def test_smartnoise_synthesizers(monkeypatch) -> None:
    rec = _Recorder()
    monkeypatch.setitem(sys.modules, "snsynth", _fake_snsynth(rec))
    out = NamedGenerator("smartnoise:aim", {"epsilon": 2.0})(TRAIN, 4, 0)
    assert len(out) == 4
    assert rec.calls == [("create", ("aim", {"epsilon": 2.0})), ("fit", 0.2)]


@pytest.mark.parametrize(
    ("name", "package"),
    [
        ("synthpop:cart", "python-synthpop"),
        ("dpmm:mst", "dpmm"),
        ("smartnoise:mst", "smartnoise-synth"),
    ],
)
def test_a_missing_package_says_what_to_install(
    monkeypatch, name: str, package: str
) -> None:
    module = NAMED_GENERATORS[name][0]
    monkeypatch.setitem(sys.modules, module, None)  # import fails
    with pytest.raises(MissingDependencyError, match=f"pip install {package}"):
        NamedGenerator(name)(TRAIN, 3, 0)


def test_a_missing_package_stops_the_audit_before_any_run(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "dpmm.pipelines", None)
    with pytest.raises(MissingDependencyError, match="pip install dpmm"):
        audit("dpmm:mst", population(40, 3), population(120, 4), n_runs=4)


def test_a_named_generator_runs_in_the_audit(monkeypatch) -> None:
    rec = _Recorder()
    monkeypatch.setitem(sys.modules, "synthpop", _fake_synthpop(rec))
    result = audit(
        "synthpop:cart",
        population(40, 3),
        population(120, 4),
        n_targets=3,
        n_runs=4,
        train_size=30,
        attacks=["dcr"],
    )
    assert result.generator == "named: synthpop:cart"
    assert result.runs["completed"] == 4
    assert len(rec.calls) == 4


def test_an_unknown_name_is_refused() -> None:
    with pytest.raises(ParameterError, match="`name` must be one of"):
        NamedGenerator("synthpop:parametric")


def test_a_named_generator_in_another_interpreter(tmp_path: Path) -> None:
    # a fake synthpop package on the other interpreter's path: the adapters' copy runs it
    package = tmp_path / "synthpop"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            class MissingDataHandler:
                def get_column_dtypes(self, df): return {}
                def detect_missingness(self, df): return {}
                def apply_imputation(self, df, missing): return df
            class DataProcessor:
                def __init__(self, metadata): pass
                def preprocess(self, df): return df
                def postprocess(self, df): return df
            class CARTMethod:
                def __init__(self, metadata, random_state=None, **kw):
                    self.seed = random_state
                def fit(self, df): self.df = df
                def sample(self, n):
                    return self.df.sample(n, replace=True, random_state=self.seed)
            """
        ),
        encoding="utf-8",
    )
    gen = PythonGenerator(sys.executable, "synthpop:cart", path=(str(tmp_path),))
    out = gen(TRAIN, 6, 5)
    assert len(out) == 6
    assert np.isin(out["x"].round(9), TRAIN["x"].round(9)).all()


def test_the_other_interpreter_hashes_text_the_same_in_every_run(tmp_path) -> None:
    # a generator whose output follows the iteration order of a set of strings: without
    # a fixed hash seed, two fresh interpreters order it differently
    (tmp_path / "setorder.py").write_text(
        "import pandas as pd\n"
        "def fit_sample(train, n, seed):\n"
        "    names = list({f'value-{i}' for i in range(50)})\n"
        "    return pd.DataFrame({'x': names[:n]})\n"
    )
    gen = PythonGenerator(sys.executable, "setorder:fit_sample", path=(str(tmp_path),))
    first, second = gen(TRAIN, 20, 0), gen(TRAIN, 20, 0)
    assert first.equals(second)


SLOW_IMPORT = """
import os
import pandas as pd

# counts the imports: one line per interpreter that imported this module
with open(os.environ["TINYGEN_IMPORTS"], "a") as handle:
    handle.write(f"{os.getpid()}\\n")


def fit_sample(train, n, seed):
    return train.sample(n, replace=True, random_state=seed).reset_index(drop=True)


def chatty(train, n, seed):
    print("a line on standard output must not break the protocol")
    return fit_sample(train, n, seed)


def flaky(train, n, seed):
    if seed % 2:
        import sys
        print("crashing on an odd seed", file=sys.stderr, flush=True)
        os._exit(9)
    return fit_sample(train, n, seed)
"""


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "slowgen.py").write_text(SLOW_IMPORT, encoding="utf-8")
    imports = tmp_path / "imports.txt"
    monkeypatch.setenv("TINYGEN_IMPORTS", str(imports))
    return tmp_path


@pytest.mark.skipif(os.name != "posix", reason="the worker needs POSIX pipes")
def test_python_generator_worker_imports_once_and_matches_fresh_processes(
    counted: Path,
) -> None:
    imports = counted / "imports.txt"
    worker = PythonGenerator(sys.executable, "slowgen:chatty", path=(str(counted),))
    fresh = PythonGenerator(
        sys.executable, "slowgen:chatty", path=(str(counted),), worker=False
    )
    try:
        outs = [worker(TRAIN, 6, seed) for seed in range(4)]
        assert len(imports.read_text().split()) == 1  # one import for four runs
        for seed, out in enumerate(outs[:2]):
            pd.testing.assert_frame_equal(out, fresh(TRAIN, 6, seed))
        assert len(imports.read_text().split()) == 3  # a fresh interpreter per run
    finally:
        worker.close()
    # the mode is how it runs, not what it makes: same cache key
    assert cache_identity(worker) == cache_identity(fresh)


@pytest.mark.skipif(os.name != "posix", reason="the worker needs POSIX pipes")
def test_python_generator_worker_restarts_after_a_crash(counted: Path) -> None:
    imports = counted / "imports.txt"
    gen = PythonGenerator(sys.executable, "slowgen:flaky", path=(str(counted),))
    try:
        assert len(gen(TRAIN, 4, 0)) == 4
        with pytest.raises(GeneratorError, match="exited with status 9") as info:
            gen(TRAIN, 4, 1)
        assert "crashing on an odd seed" in str(info.value)  # its standard error
        assert len(gen(TRAIN, 4, 2)) == 4  # a fresh worker
        assert len(imports.read_text().split()) == 2
    finally:
        gen.close()


@pytest.mark.skipif(os.name != "posix", reason="the worker needs POSIX pipes")
def test_the_audit_runs_a_worker_per_job_slot(counted: Path) -> None:
    imports = counted / "imports.txt"
    gen = PythonGenerator(sys.executable, "slowgen:fit_sample", path=(str(counted),))
    result = audit(
        gen,
        population(40, 3),
        population(120, 4),
        n_targets=2,
        n_runs=8,
        train_size=20,
        attacks=["dcr"],
        n_jobs=2,
    )
    assert result.runs["completed"] == 8
    assert 1 <= len(imports.read_text().split()) <= 2  # at most one per job slot
    assert not gen._pool.idle  # type: ignore[attr-defined]  # stopped at the end
