# SPDX-License-Identifier: BSD-3-Clause
"""Generator adapters: how the audit trains a generator and draws a synthetic table.

The audit needs one operation, ``fit_sample(train, n, seed) -> DataFrame``: train the
generator on ``train`` and return ``n`` synthetic rows, seeded by ``seed``. These
adapters provide it:

* any Python callable with that signature (used as it is);
* :class:`CommandGenerator`: a command template for a generator in another language or
  another Python environment, exchanging CSV files in a temporary folder;
* :class:`PythonGenerator`: a ``module:function`` (or a named generator) run by another
  Python interpreter, such as another virtual environment's, exchanging CSV or Parquet
  files: for generator packages that pin libraries this environment cannot have;
* :class:`SDVGenerator`: an SDV single-table synthesizer (GaussianCopula, CTGAN, TVAE,
  CopulaGAN) run in this process; SDV is imported only when it is used (the ``audit``
  extra: ``pip install 'synthrisk[audit]'``);
* :class:`NamedGenerator`: synthpop's CART, dpmm's MST / AIM / PrivBayes or a
  smartnoise-synth synthesizer (:mod:`synthrisk.audit.adapters`), imported when used.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import pickle
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeAlias, runtime_checkable

import pandas as pd

from synthrisk._optional import import_optional
from synthrisk.audit import adapters, worker
from synthrisk.exceptions import GeneratorError, ParameterError

__all__ = [
    "NAMED_GENERATORS",
    "SDV_SYNTHESIZERS",
    "CommandGenerator",
    "FitSample",
    "GeneratorError",
    "GeneratorLike",
    "NamedGenerator",
    "PythonGenerator",
    "SDVGenerator",
    "as_fit_sample",
    "cache_identity",
    "close_generator",
    "describe_generator",
    "kills_its_own_process",
    "preflight",
    "stderr_tail",
    "with_timeout",
]

#: named generators (:mod:`synthrisk.audit.adapters`): name -> (module, package to install)
NAMED_GENERATORS: dict[str, tuple[str, str]] = dict(adapters.NAMED)


def _run(
    argv: list[str],
    *,
    timeout: float | None,
    env: Mapping[str, str] | None,
    what: str,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` without a shell (``stdin``, if any, on its standard input); on
    ``timeout`` kill it and every process it started.

    Raises
    ------
    GeneratorError
        When the program is missing or runs past ``timeout``.
    """
    full_env = None if env is None else {**os.environ, **env}
    posix = os.name == "posix"
    try:
        process = subprocess.Popen(  # the user's own program, no shell
            argv,
            stdin=None if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=full_env,
            start_new_session=posix,  # its own process group: killed as a whole
        )
    except FileNotFoundError as exc:
        msg = f"{what}: program {argv[0]!r} not found ({exc})."
        raise GeneratorError(msg) from exc
    try:
        stdout, stderr = process.communicate(input=stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        if posix:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
        process.communicate()
        msg = f"{what} ran past `timeout`={timeout:g} s and was stopped."
        raise GeneratorError(msg) from None
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def stderr_tail(text: str | None, *, lines: int = 12, chars: int = 1500) -> str:
    """The last ``lines`` lines of a program's standard error (at most ``chars``
    characters), blank lines dropped: what a failed run's message shows of it."""
    kept = [line.rstrip() for line in (text or "").splitlines() if line.strip()]
    tail = "\n".join(kept[-lines:])
    return tail[-chars:]


def _exit_message(what: str, returncode: int, stderr: str | None) -> str:
    """``what exited with status N``, then the end of its standard error."""
    tail = stderr_tail(stderr)
    if not tail:
        return f"{what} exited with status {returncode} and wrote nothing to standard error."
    return (
        f"{what} exited with status {returncode}; its standard error ends with:\n{tail}"
    )


@runtime_checkable
class FitSample(Protocol):
    """Train a generator on ``train`` and return ``n`` synthetic rows, seeded by ``seed``."""

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame: ...


#: what :func:`synthrisk.audit.audit` accepts as a generator: a callable, a command
#: template (a string with ``{train}`` and ``{out}``) or an adapter of this module
GeneratorLike: TypeAlias = (
    "FitSample | Callable[[pd.DataFrame, int, int], pd.DataFrame] | str"
)

_PLACEHOLDERS = ("train", "out", "n", "seed")


@dataclasses.dataclass(frozen=True)
class CommandGenerator:
    """A generator run as a command: ``"gen --train {train} --out {out} --rows {n} --seed {seed}"``.

    Each call writes the training rows to ``{train}`` (CSV with a header, no index) in a
    fresh temporary folder, runs the command (split like a shell line, then each word
    formatted, so paths with spaces stay one argument; no shell is involved) and reads
    ``{out}`` back as CSV. ``{n}`` and ``{seed}`` are the rows wanted and the run's
    seed.

    Parameters
    ----------
    template : str
        The command line; must contain ``{train}`` and ``{out}``.
    timeout : float or None, default=None
        Seconds one call may take; None waits for ever.
    env : mapping of str to str or None, default=None
        Extra environment variables for the command.

    Raises
    ------
    ParameterError
        If the template lacks ``{train}`` or ``{out}``, or names an unknown placeholder.
    """

    template: str
    timeout: float | None = None
    env: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.template, str) or not self.template.strip():
            msg = f"`template` must be a non-empty command line; got {self.template!r}."
            raise ParameterError(msg)
        try:
            words = shlex.split(self.template)
            for word in words:
                word.format(**dict.fromkeys(_PLACEHOLDERS, "x"))
        except (ValueError, KeyError, IndexError) as exc:
            msg = (
                f"`template` {self.template!r} cannot be used: {exc}. Use only the "
                "placeholders {train}, {out}, {n} and {seed}; write literal braces as {{ and }}."
            )
            raise ParameterError(msg) from exc
        for needed in ("{train}", "{out}"):
            if needed not in self.template:
                msg = (
                    f"`template` must contain {needed}: the command reads the training "
                    f"rows from {{train}} and writes the synthetic rows to {{out}}; got {self.template!r}."
                )
                raise ParameterError(msg)

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        """Run the command once and return the table it wrote."""
        with tempfile.TemporaryDirectory(prefix="synthrisk-audit-") as folder:
            train_path = Path(folder) / "train.csv"
            out_path = Path(folder) / "synthetic.csv"
            train.to_csv(train_path, index=False)
            values = {
                "train": str(train_path),
                "out": str(out_path),
                "n": str(int(n)),
                "seed": str(int(seed)),
            }
            argv = [word.format(**values) for word in shlex.split(self.template)]
            done = _run(
                argv,
                timeout=self.timeout,
                env=self.env,
                what=f"generator command {self.template!r}",
            )
            what = f"generator command {self.template!r}"
            if done.returncode != 0:
                raise GeneratorError(
                    _exit_message(what, done.returncode, done.stderr or done.stdout)
                )
            if not out_path.is_file():
                tail = stderr_tail(done.stderr)
                msg = (
                    f"{what} exited normally but wrote no table to {{out}}; it must "
                    "write its synthetic rows there as CSV"
                    + (
                        f". Its standard error ends with:\n{tail}"
                        if tail
                        else " (it wrote nothing to standard error)."
                    )
                )
                raise GeneratorError(msg)
            try:
                return pd.read_csv(out_path)
            except (ValueError, OSError) as exc:
                msg = f"generator command {self.template!r} wrote a table that cannot be read as CSV: {exc}."
                raise GeneratorError(msg) from exc


_FORMATS = ("csv", "parquet")


#: what :func:`pandas.api.types.infer_dtype` says of values that are not text
_NOT_TEXT = frozenset(
    {
        "integer",
        "floating",
        "mixed-integer-float",
        "decimal",
        "complex",
        "boolean",
        "empty",
    }
)


def _text_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of ``frame`` whose values are not numbers or booleans (a categorical
    column: its categories'): the worker reads them as text, and so does the read-back."""
    names = []
    for i, name in enumerate(frame.columns):
        column = frame.iloc[:, i]
        values = (
            column.cat.categories
            if isinstance(column.dtype, pd.CategoricalDtype)
            else column
        )
        if pd.api.types.infer_dtype(values, skipna=True) not in _NOT_TEXT:
            names.append(str(name))
    return names


def _failed_message(what: str, error: object, stderr: str | None) -> str:
    """``what failed: <the generator's error>``, then the end of its standard error."""
    tail = stderr_tail(stderr)
    return f"{what} failed: {error or 'the generator failed'}" + (
        f"\nIts standard error ends with:\n{tail}" if tail else ""
    )


def _copy_worker(folder: Path) -> None:
    """Copy the worker and the named generators' adapters into ``folder``: the other
    interpreter runs these copies, so synthrisk need not be installed there."""
    shutil.copyfile(worker.__file__, folder / "_synthrisk_worker.py")
    shutil.copyfile(adapters.__file__, folder / "_synthrisk_adapters.py")


class _Worker:
    """One persistent worker process (:mod:`synthrisk.audit.worker`) and its stderr log."""

    def __init__(
        self, argv: list[str], env: Mapping[str, str], log: Path, *, what: str
    ) -> None:
        self.what = what
        self.log_path = log
        self.log = log.open("ab")
        full_env = {**os.environ, **env}
        try:
            self.process = subprocess.Popen(  # the user's interpreter, no shell
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.log,
                env=full_env,
                start_new_session=True,  # its own process group: killed as a whole
            )
        except FileNotFoundError as exc:
            self.log.close()
            msg = f"{what}: program {argv[0]!r} not found ({exc})."
            raise GeneratorError(msg) from exc
        self._buffer = b""

    def _stderr_since(self, offset: int) -> str:
        if not self.log.closed:
            self.log.flush()
        try:
            with self.log_path.open("rb") as handle:
                handle.seek(offset)
                return handle.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def _read_line(self, deadline: float | None, offset: int) -> dict[str, Any]:
        import select

        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                self.kill()
                raise TimeoutError
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:  # the worker died
                code = self.process.wait()
                msg = _exit_message(self.what, code, self._stderr_since(offset))
                self.kill()
                raise GeneratorError(msg)
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            self.kill()
            msg = f"{self.what} wrote something other than the worker protocol: {line[:200]!r}."
            raise GeneratorError(msg)
        return answer

    def start(self, timeout: float | None) -> None:
        """Wait for the worker's ``ready`` (its imports done)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            self._read_line(deadline, 0)
        except TimeoutError:
            msg = (
                f"{self.what} ran past `timeout`={timeout:g} s before it was ready (its "
                "imports) and was stopped."
            )
            raise GeneratorError(msg) from None

    def call(self, request: Mapping[str, Any], timeout: float | None) -> None:
        """One run; raises GeneratorError with the generator's error and stderr."""
        assert self.process.stdin is not None
        self.log.flush()
        offset = self.log_path.stat().st_size
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            self.process.stdin.write((json.dumps(dict(request)) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            code = self.process.wait()
            msg = _exit_message(self.what, code, self._stderr_since(offset))
            self.kill()
            raise GeneratorError(msg) from None
        try:
            answer = self._read_line(deadline, offset)
        except TimeoutError:
            msg = f"{self.what} ran past `timeout`={timeout:g} s and was stopped."
            raise GeneratorError(msg) from None
        if not answer.get("ok"):
            raise GeneratorError(
                _failed_message(
                    self.what, answer.get("error"), self._stderr_since(offset)
                )
            )

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """Kill the worker and every process it started."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self.log.close()

    def stop(self) -> None:
        """Close its standard input (it exits), then make sure it is gone."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        self.kill()


def _stop_workers(idle: list[_Worker], folders: list[str]) -> None:
    """Stop idle workers and remove their folder (``close``, or the pool's finalizer)."""
    while idle:
        idle.pop().stop()
    while folders:
        shutil.rmtree(folders.pop(), ignore_errors=True)


class _WorkerPool:
    """Idle workers of one generator: a call takes one (or starts one), and gives it
    back when it answered; a worker that crashed or ran past the timeout is dropped, so
    the next call starts a fresh one. As many workers live as calls run at once (one per
    job slot). They are stopped by :meth:`close`, or when the pool is collected or the
    interpreter exits."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: list[_Worker] = []
        self.folders: list[str] = []
        self.started = 0
        weakref.finalize(self, _stop_workers, self.idle, self.folders)

    def folder_for(self) -> Path:
        with self.lock:
            if not self.folders:
                folder = tempfile.mkdtemp(prefix="synthrisk-worker-")
                _copy_worker(Path(folder))
                self.folders.append(folder)
            return Path(self.folders[0])

    def take(self) -> _Worker | None:
        with self.lock:
            while self.idle:
                candidate = self.idle.pop()
                if candidate.alive():
                    return candidate
                candidate.kill()
            return None

    def give_back(self, item: _Worker) -> None:
        with self.lock:
            self.idle.append(item)

    def close(self) -> None:
        with self.lock:
            _stop_workers(self.idle, self.folders)


@dataclasses.dataclass(frozen=True)
class PythonGenerator:
    """``fit_sample`` run by another Python interpreter, such as another virtual environment's.

    Each call writes the training rows to a fresh temporary folder (CSV, or Parquet
    when both environments have pyarrow) and has the other interpreter run a copy of
    :mod:`synthrisk.audit.worker` (no shell; the working directory and ``path`` are on
    its import path), which imports ``function`` (``"module:function"``), calls
    ``function(train, n, seed, **params)`` and writes the synthetic rows back; a named
    generator (``"synthpop:cart"``, ``"dpmm:mst"``, ... see :data:`NAMED_GENERATORS`) is
    run by a copy of :mod:`synthrisk.audit.adapters`. These copies need only the
    standard library, pandas and numpy there (checked with pandas 2.3 and 3.1):
    synthrisk itself need not be installed in the other environment. Text columns stay text both ways (a code
    ``"01"`` is not read back as the number 1; :func:`synthrisk.audit.worker.read_table`).
    Use it for generator packages whose pins this environment cannot meet.

    By default (``worker=True``, on POSIX systems) the interpreter is started once per
    job slot as a persistent worker (:mod:`synthrisk.audit.worker`): it imports
    ``function`` once and is fed run after run over its standard input, so heavy imports
    (SDV's, torch's: seconds each) are paid once per worker instead of once per run. A
    worker that crashes or runs past ``timeout`` is killed with what it started and the
    next run starts a fresh one; :meth:`close` (called by the audit at its end) stops
    them. ``worker=False`` starts a fresh interpreter for every run instead (for a
    generator that keeps state between calls, or leaks memory). The
    interpreter runs with ``PYTHONHASHSEED=0`` (unless it is set here): a fresh
    interpreter otherwise orders sets of text differently in every run, and generators
    that iterate over them (dpmm's) give different tables for the same seed.

    Parameters
    ----------
    python : str
        The interpreter: a path (``venvs/synthpop/bin/python``) or a program on
        ``PATH``.
    function : str
        ``"module:function"`` importable there, or a named generator.
    params : mapping, default={}
        Keyword arguments of the function (JSON-safe values).
    path : sequence of str, default=()
        Folders put first on the interpreter's import path (``PYTHONPATH``).
    timeout : float or None, default=None
        Seconds one call may take; the interpreter and what it started are then killed.
    data_format : {"csv", "parquet"}, default="csv"
        How the tables travel.
    worker : bool, default=True
        Keep one interpreter per job slot alive between runs (POSIX only; elsewhere a
        fresh interpreter runs each call).

    Raises
    ------
    ParameterError
        If the interpreter is not found, ``function`` is not ``module:function`` or a
        named generator, or ``data_format`` is unknown.
    """

    python: str
    function: str
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    path: tuple[str, ...] = ()
    timeout: float | None = None
    data_format: str = "csv"
    worker: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "_pool", _WorkerPool())
        if not isinstance(self.python, str) or not (
            Path(self.python).is_file() or shutil.which(self.python)
        ):
            msg = (
                f"`python` {self.python!r} is not an interpreter found on this machine; give "
                "the path of another environment's python (e.g. venvs/gen/bin/python)."
            )
            raise ParameterError(msg)
        module, colon, name = str(self.function).partition(":")
        if not (colon and module and name):
            msg = (
                "`function` must be 'module:function' (importable by that interpreter) or a "
                f"named generator ({sorted(NAMED_GENERATORS)}); got {self.function!r}."
            )
            raise ParameterError(msg)
        if self.data_format not in _FORMATS:
            msg = f"`data_format` must be one of {list(_FORMATS)}; got {self.data_format!r}."
            raise ParameterError(msg)
        try:
            json.dumps(dict(self.params))
        except (TypeError, ValueError) as exc:
            msg = f"`params` must be JSON-safe (numbers, strings, lists, mappings): {exc}."
            raise ParameterError(msg) from exc

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # its fields only: the worker pool (processes, a lock) stays in this process
        return (
            type(self),
            tuple(getattr(self, f.name) for f in dataclasses.fields(self)),
        )

    def close(self) -> None:
        """Stop the persistent workers (a later call starts new ones)."""
        self._pool.close()  # type: ignore[attr-defined]

    def _env(self, search: list[str]) -> dict[str, str]:
        old = os.environ.get("PYTHONPATH")
        return {
            "PYTHONPATH": os.pathsep.join([*search, *([old] if old else [])]),
            # string hashing (set and dict orders of text) the same in every run, so
            # that a generator seeded by the run's seed gives the same table
            "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0"),
        }

    def _target(self) -> str:
        return (
            f"named:{self.function}"
            if self.function in NAMED_GENERATORS
            else self.function
        )

    def _request(
        self, train: pd.DataFrame, n: int, seed: int, folder: Path
    ) -> dict[str, Any]:
        """Write ``train`` into ``folder``; the worker's request for one run."""
        suffix = ".parquet" if self.data_format == "parquet" else ".csv"
        train_path = folder / f"train{suffix}"
        worker.write_table(train, str(train_path), self.data_format)
        return {
            "train": str(train_path),
            "out": str(folder / f"synthetic{suffix}"),
            "n": int(n),
            "seed": int(seed),
            "format": self.data_format,
            "params": dict(self.params),
            "text": _text_columns(train),
        }

    def _read_back(self, request: Mapping[str, Any], what: str) -> pd.DataFrame:
        """The table the worker wrote, its columns typed as text where ``train``'s are."""
        try:
            return pd.DataFrame(
                worker.read_table(request["out"], self.data_format, request["text"])
            )
        except (ValueError, OSError, ImportError) as exc:
            msg = f"{what} wrote no table that can be read back: {exc}."
            raise GeneratorError(msg) from exc

    def _call_worker(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        what = f"generator {self.function!r} in {self.python!r} (worker)"
        pool: _WorkerPool = self._pool  # type: ignore[attr-defined]
        current = pool.take()
        if current is None:
            folder = pool.folder_for()
            with pool.lock:
                pool.started += 1
                log = folder / f"worker-{pool.started}.log"
            # the working directory stays importable, as with ``python -c``
            env = self._env([*self.path, os.getcwd()])
            current = _Worker(
                [self.python, str(folder / "_synthrisk_worker.py"), self._target()],
                env,
                log,
                what=what,
            )
            try:
                current.start(self.timeout)
            except GeneratorError:
                current.kill()
                raise
        with tempfile.TemporaryDirectory(prefix="synthrisk-audit-") as run_folder:
            request = self._request(train, n, seed, Path(run_folder))
            try:
                current.call(request, self.timeout)
            except GeneratorError:
                if current.alive():
                    pool.give_back(current)  # the generator failed, the worker did not
                raise
            except BaseException:
                current.kill()
                raise
            pool.give_back(current)
            return self._read_back(request, what)

    def _call_fresh(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        """A fresh interpreter runs the worker for this one request, then exits."""
        what = f"generator {self.function!r} in {self.python!r}"
        with tempfile.TemporaryDirectory(prefix="synthrisk-audit-") as name:
            folder = Path(name)
            _copy_worker(folder)
            request = self._request(train, n, seed, folder)
            done = _run(
                [self.python, str(folder / "_synthrisk_worker.py"), self._target()],
                timeout=self.timeout,
                # the working directory stays importable, as with ``python -c``
                env=self._env([*self.path, os.getcwd()]),
                what=what,
                stdin=json.dumps(request) + "\n",
            )
            if done.returncode != 0:
                raise GeneratorError(
                    _exit_message(what, done.returncode, done.stderr or done.stdout)
                )
            answer = _last_answer(done.stdout)
            if answer is None:
                msg = (
                    f"{what} exited without answering the worker protocol; its standard "
                    f"output ends with: {(done.stdout or '')[-200:]!r}."
                )
                raise GeneratorError(msg)
            if not answer.get("ok"):
                raise GeneratorError(
                    _failed_message(what, answer.get("error"), done.stderr)
                )
            return self._read_back(request, what)

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        """Run the function once in the other interpreter and return its table."""
        if self.worker and os.name == "posix":
            return self._call_worker(train, n, seed)
        return self._call_fresh(train, n, seed)


def _last_answer(stdout: str | None) -> dict[str, Any] | None:
    """The worker's answer to its one request: the last protocol line with ``ok``."""
    for line in reversed((stdout or "").splitlines()):
        try:
            answer = json.loads(line)
        except ValueError:
            continue
        if isinstance(answer, dict) and "ok" in answer:
            return answer
    return None


@dataclasses.dataclass(frozen=True)
class NamedGenerator:
    """A named generator run in this process: synthpop's CART, dpmm's or smartnoise's.

    ``"synthpop:cart"`` (``pip install python-synthpop``), ``"dpmm:mst"``, ``"dpmm:aim"``,
    ``"dpmm:privbayes"`` (``pip install dpmm``), ``"smartnoise:mst"``, ``"smartnoise:aim"``,
    ``"smartnoise:mwem"``, ``"smartnoise:dpctgan"``, ``"smartnoise:patectgan"``
    (``pip install smartnoise-synth``); see :mod:`synthrisk.audit.adapters` for the calls.
    These packages pin libraries (synthpop needs pandas >= 3.0.2, dpmm scikit-learn
    1.5.0) that often clash with this environment's: install them in an environment of
    their own and use :class:`PythonGenerator` with the same name instead.

    Parameters
    ----------
    name : str
        A key of :data:`NAMED_GENERATORS`.
    params : mapping, default={}
        Keyword arguments (``epsilon`` for the DP generators: default 1).

    Raises
    ------
    ParameterError
        If ``name`` is unknown.
    MissingDependencyError
        When called without the package installed.
    """

    name: str
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.name not in NAMED_GENERATORS:
            msg = (
                f"`name` must be one of {sorted(NAMED_GENERATORS)}; got {self.name!r}."
            )
            raise ParameterError(msg)

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        """Train the generator on ``train`` and return ``n`` rows."""
        module, package = NAMED_GENERATORS[self.name]
        import_optional(module, package=package)
        return adapters.fit_named(self.name, train, n, seed, **dict(self.params))


def preflight(generator: object) -> None:
    """Import what an in-process adapter needs now, so a missing package stops the audit
    before its first run with the install hint, instead of failing every run.

    Raises
    ------
    MissingDependencyError
        When SDV or a named generator's package is not installed.
    """
    if isinstance(generator, NamedGenerator):
        module, package = NAMED_GENERATORS[generator.name]
        import_optional(module, package=package)
    elif isinstance(generator, SDVGenerator):
        import_optional("sdv.single_table", extra="audit")


def close_generator(generator: object) -> None:
    """Stop what a generator keeps running between calls (a :class:`PythonGenerator`'s
    persistent workers); nothing for the others."""
    close = getattr(generator, "close", None)
    if isinstance(generator, PythonGenerator) and callable(close):
        close()


def kills_its_own_process(generator: object) -> bool:
    """True for adapters that run a subprocess and enforce their own ``timeout``."""
    return isinstance(generator, (CommandGenerator, PythonGenerator))


def with_timeout(generator: FitSample, timeout: float | None) -> FitSample:
    """The generator with ``timeout`` given to a subprocess adapter that has none."""
    if (
        timeout is not None
        and kills_its_own_process(generator)
        and generator.timeout is None  # type: ignore[attr-defined]
    ):
        return dataclasses.replace(generator, timeout=timeout)  # type: ignore[type-var]
    return generator


#: SDV single-table synthesizers by short name
SDV_SYNTHESIZERS: dict[str, str] = dict(adapters.SDV_SYNTHESIZERS)


@dataclasses.dataclass(frozen=True)
class SDVGenerator:
    """An SDV single-table synthesizer, trained and sampled in this process.

    ``GaussianCopulaSynthesizer(metadata, **params).fit(train)`` then
    ``.sample(num_rows=n)``, with the metadata detected from each training table and the
    global numpy, ``random`` and torch generators seeded with the run's seed (SDV takes no
    seed argument); SDV 2.x's one-table mappings in and out are handled
    (:func:`synthrisk.audit.adapters.sdv_synthesizer`). SDV 2.x needs pandas < 3: where
    this environment has pandas 3, install SDV in an environment of its own and use
    :class:`PythonGenerator` with the same name (``"sdv:ctgan"``).

    Parameters
    ----------
    synthesizer : {"gaussian_copula", "ctgan", "tvae", "copula_gan"}
        Which SDV synthesizer.
    params : mapping, default={}
        Keyword arguments of the synthesizer (``epochs=50`` for CTGAN, ...).

    Raises
    ------
    ParameterError
        If ``synthesizer`` is not one of the four names.
    MissingDependencyError
        When called without SDV installed (``pip install 'synthrisk[audit]'``).
    """

    synthesizer: str
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.synthesizer not in SDV_SYNTHESIZERS:
            msg = f"`synthesizer` must be one of {list(SDV_SYNTHESIZERS)}; got {self.synthesizer!r}."
            raise ParameterError(msg)

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        """Train the synthesizer on ``train`` and sample ``n`` rows."""
        import_optional("sdv.single_table", extra="audit")
        import_optional("sdv.metadata", extra="audit")
        return adapters.sdv_synthesizer(
            self.synthesizer, train, n, seed, **dict(self.params)
        )


def as_fit_sample(generator: Any) -> FitSample:
    """The generator as a ``fit_sample`` callable.

    A string is a command template (:class:`CommandGenerator`); ``"sdv:ctgan"`` names an
    SDV synthesizer (:class:`SDVGenerator`), ``"dpmm:mst"`` and the other keys of
    :data:`NAMED_GENERATORS` a named generator (:class:`NamedGenerator`); a callable is
    used as it is.

    Raises
    ------
    ParameterError
        For anything else.
    """
    if isinstance(generator, str):
        if generator.startswith("sdv:"):
            return SDVGenerator(generator.removeprefix("sdv:"))
        if generator in NAMED_GENERATORS:
            return NamedGenerator(generator)
        return CommandGenerator(generator)
    if callable(generator):
        return generator
    msg = (
        "`generator` must be a callable fit_sample(train, n, seed) -> DataFrame, a command "
        "template such as 'gen --train {train} --out {out} --rows {n} --seed {seed}', or "
        f"'sdv:<name>' with name in {list(SDV_SYNTHESIZERS)}, or a named generator "
        f"({sorted(NAMED_GENERATORS)}); got {type(generator).__name__}."
    )
    raise ParameterError(msg)


def cache_identity(generator: FitSample) -> str:
    """What names the generator in the run cache: its description and its settings.

    An adapter's fields (all but ``timeout``); for a picklable callable, a hash of its
    pickle, which holds an instance's attributes (a function pickles by name: change
    the cache folder when you change its code).
    """
    text = describe_generator(generator)
    if dataclasses.is_dataclass(generator) and not isinstance(generator, type):
        fields = {
            f.name: getattr(generator, f.name)
            for f in dataclasses.fields(generator)
            if f.name not in ("timeout", "worker")  # how it runs, not what it makes
        }
        return text + " " + json.dumps(fields, sort_keys=True, default=repr)
    try:  # an instance's settings (a function pickles by its name only)
        state = pickle.dumps(generator, protocol=4)
    except Exception:
        return text
    return text + " " + hashlib.sha256(state).hexdigest()


def describe_generator(generator: FitSample) -> str:
    """A one-line description of the generator for the result (never its data)."""
    if isinstance(generator, CommandGenerator):
        return f"command: {generator.template}"
    if isinstance(generator, SDVGenerator):
        return f"sdv: {SDV_SYNTHESIZERS[generator.synthesizer]}"
    if isinstance(generator, NamedGenerator):
        return f"named: {generator.name}"
    if isinstance(generator, PythonGenerator):
        return f"python: {generator.function} in {generator.python}"
    if isinstance(generator, functools.partial):
        inner = describe_generator(generator.func)
        return f"{inner} with {json.dumps(generator.keywords, sort_keys=True, default=repr)}"
    name = getattr(generator, "__qualname__", None) or type(generator).__qualname__
    module = getattr(generator, "__module__", None) or type(generator).__module__
    return f"callable: {module}.{name}"
