# SPDX-License-Identifier: BSD-3-Clause
"""Generator adapters: how the audit trains a generator and draws a synthetic table.

The audit needs one operation, ``fit_sample(train, n, seed) -> DataFrame``: train the
generator on ``train`` and return ``n`` synthetic rows, seeded by ``seed``. Three
adapters provide it:

* any Python callable with that signature (used as it is);
* :class:`CommandGenerator`: a command template for a generator in another language or
  another Python environment, exchanging CSV files in a temporary folder;
* :class:`SDVGenerator`: an SDV single-table synthesizer (GaussianCopula, CTGAN, TVAE,
  CopulaGAN) run in this process; SDV is imported only when it is used (the ``audit``
  extra: ``pip install 'synthrisk[audit]'``).
"""

from __future__ import annotations

import dataclasses
import os
import random
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeAlias, runtime_checkable

import numpy as np
import pandas as pd

from synthrisk._optional import import_optional
from synthrisk.exceptions import GeneratorError, ParameterError

__all__ = [
    "SDV_SYNTHESIZERS",
    "CommandGenerator",
    "FitSample",
    "GeneratorError",
    "GeneratorLike",
    "SDVGenerator",
    "as_fit_sample",
    "describe_generator",
]


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
            env = None if self.env is None else {**os.environ, **self.env}
            try:
                done = subprocess.run(  # the user's own command, no shell
                    argv,
                    capture_output=True,
                    text=True,
                    timeout=self.timeout,
                    env=env,
                    check=False,
                )
            except FileNotFoundError as exc:
                msg = f"generator command {self.template!r}: program {argv[0]!r} not found ({exc})."
                raise GeneratorError(msg) from exc
            except subprocess.TimeoutExpired as exc:
                msg = f"generator command {self.template!r} ran past `timeout`={self.timeout} s."
                raise GeneratorError(msg) from exc
            if done.returncode != 0:
                tail = (done.stderr or done.stdout or "").strip()[-500:]
                msg = (
                    f"generator command {self.template!r} exited with status "
                    f"{done.returncode}" + (f": {tail}" if tail else ".")
                )
                raise GeneratorError(msg)
            if not out_path.is_file():
                msg = (
                    f"generator command {self.template!r} exited normally but wrote no "
                    "table to {out}; it must write its synthetic rows there as CSV."
                )
                raise GeneratorError(msg)
            try:
                return pd.read_csv(out_path)
            except (ValueError, OSError) as exc:
                msg = f"generator command {self.template!r} wrote a table that cannot be read as CSV: {exc}."
                raise GeneratorError(msg) from exc


#: SDV single-table synthesizers by short name
SDV_SYNTHESIZERS: dict[str, str] = {
    "gaussian_copula": "GaussianCopulaSynthesizer",
    "ctgan": "CTGANSynthesizer",
    "tvae": "TVAESynthesizer",
    "copula_gan": "CopulaGANSynthesizer",
}


def _seed_everything(seed: int) -> None:
    """Seed the global generators SDV draws from (numpy, random, and torch once imported)."""
    random.seed(seed)
    np.random.seed(seed & 0xFFFFFFFF)  # noqa: NPY002 - SDV samples from numpy's global state
    torch = sys.modules.get("torch")  # SDV's neural synthesizers import it themselves
    if torch is not None:
        torch.manual_seed(seed)


def _sdv_metadata(sdv_module: Any, train: pd.DataFrame) -> Any:
    """Single-table metadata detected from ``train``: SDV 1.x's or 2.x's class."""
    metadata_module = import_optional("sdv.metadata", extra="audit")
    if hasattr(metadata_module, "Metadata"):  # SDV >= 1.15 and 2.x
        metadata_cls = metadata_module.Metadata
        if hasattr(metadata_cls, "detect_from_dataframe"):
            return metadata_cls.detect_from_dataframe(train)
    metadata = metadata_module.SingleTableMetadata()
    metadata.detect_from_dataframe(train)
    return metadata


@dataclasses.dataclass(frozen=True)
class SDVGenerator:
    """An SDV single-table synthesizer, trained and sampled in this process.

    ``GaussianCopulaSynthesizer(metadata, **params).fit(train)`` then
    ``.sample(num_rows=n)``, with the metadata detected from each training table and the
    global numpy, ``random`` and torch generators seeded with the run's seed (SDV takes no
    seed argument).

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
        single_table = import_optional("sdv.single_table", extra="audit")
        cls = getattr(single_table, SDV_SYNTHESIZERS[self.synthesizer])
        metadata = _sdv_metadata(single_table, train)
        _seed_everything(seed)
        model = cls(metadata, **dict(self.params))
        model.fit(train)
        out = model.sample(num_rows=int(n))
        return pd.DataFrame(out)


def as_fit_sample(generator: Any) -> FitSample:
    """The generator as a ``fit_sample`` callable.

    A string is a command template (:class:`CommandGenerator`); ``"sdv:ctgan"`` names an
    SDV synthesizer (:class:`SDVGenerator`); a callable is used as it is.

    Raises
    ------
    ParameterError
        For anything else.
    """
    if isinstance(generator, str):
        if generator.startswith("sdv:"):
            return SDVGenerator(generator.removeprefix("sdv:"))
        return CommandGenerator(generator)
    if callable(generator):
        return generator
    msg = (
        "`generator` must be a callable fit_sample(train, n, seed) -> DataFrame, a command "
        "template such as 'gen --train {train} --out {out} --rows {n} --seed {seed}', or "
        f"'sdv:<name>' with name in {list(SDV_SYNTHESIZERS)}; got {type(generator).__name__}."
    )
    raise ParameterError(msg)


def describe_generator(generator: FitSample) -> str:
    """A one-line description of the generator for the result (never its data)."""
    if isinstance(generator, CommandGenerator):
        return f"command: {generator.template}"
    if isinstance(generator, SDVGenerator):
        return f"sdv: {SDV_SYNTHESIZERS[generator.synthesizer]}"
    name = getattr(generator, "__qualname__", None) or type(generator).__qualname__
    module = getattr(generator, "__module__", None) or type(generator).__module__
    return f"callable: {module}.{name}"
