# SPDX-License-Identifier: BSD-3-Clause
"""Named generators: SDV's synthesizers, synthpop's CART, dpmm's MST / AIM / PrivBayes, smartnoise-synth.

This module imports nothing of synthrisk, so that the same code runs in this process
(:class:`synthrisk.audit.NamedGenerator`) and, copied next to a small runner, in another
Python environment (:class:`synthrisk.audit.PythonGenerator`): these packages pin
libraries that synthrisk's own environment may not satisfy (synthpop needs pandas >=
3.0.2, dpmm pins scikit-learn 1.5.0, SDV 2.0 needs pandas < 3).

Every function is ``fit_sample(train, n, seed, **params) -> DataFrame``. The packages
take no seed argument everywhere, so the global ``random`` and numpy generators are
seeded with the run's seed as well.
"""

from __future__ import annotations

import importlib
import random
import sys
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["NAMED", "fit_named"]

#: name -> (module imported, distribution to install)
NAMED: dict[str, tuple[str, str]] = {
    "sdv:gaussian_copula": ("sdv.single_table", "sdv"),
    "sdv:ctgan": ("sdv.single_table", "sdv"),
    "sdv:tvae": ("sdv.single_table", "sdv"),
    "sdv:copula_gan": ("sdv.single_table", "sdv"),
    "synthpop:cart": ("synthpop", "python-synthpop"),
    "dpmm:mst": ("dpmm.pipelines", "dpmm"),
    "dpmm:aim": ("dpmm.pipelines", "dpmm"),
    "dpmm:privbayes": ("dpmm.pipelines", "dpmm"),
    "smartnoise:mst": ("snsynth", "smartnoise-synth"),
    "smartnoise:aim": ("snsynth", "smartnoise-synth"),
    "smartnoise:mwem": ("snsynth", "smartnoise-synth"),
    "smartnoise:dpctgan": ("snsynth", "smartnoise-synth"),
    "smartnoise:patectgan": ("snsynth", "smartnoise-synth"),
}

#: SDV single-table synthesizers by short name
SDV_SYNTHESIZERS: dict[str, str] = {
    "gaussian_copula": "GaussianCopulaSynthesizer",
    "ctgan": "CTGANSynthesizer",
    "tvae": "TVAESynthesizer",
    "copula_gan": "CopulaGANSynthesizer",
}

_DPMM_PIPELINES = {
    "mst": "MSTPipeline",
    "aim": "AIMPipeline",
    "privbayes": "PrivBayesPipeline",
}


def _seed_globals(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed & 0xFFFFFFFF)  # noqa: NPY002 - the packages draw from numpy's global state


def sdv_synthesizer(
    model: str, train: pd.DataFrame, n: int, seed: int, **params: Any
) -> pd.DataFrame:
    """An SDV single-table synthesizer (``pip install sdv``), SDV 1.x or 2.x.

    SDV 2.x (which needs pandas < 3) takes and returns a mapping of table names to frames:
    ``Metadata.detect_from_dataframes({"table": df})``, ``fit({"table": df})``,
    ``sample(num_rows=n)`` -> ``{"table": df}``. SDV 1.x takes one frame:
    ``Metadata.detect_from_dataframe(df)`` (``SingleTableMetadata`` before 1.15),
    ``fit(df)``, ``sample(num_rows=n)`` -> frame. ``params`` go to the synthesizer
    (``epochs`` for CTGAN, TVAE, CopulaGAN). SDV takes no seed: numpy's, ``random``'s and
    torch's global generators are seeded with the run's.
    """
    single_table = importlib.import_module("sdv.single_table")
    metadata_module = importlib.import_module("sdv.metadata")
    cls = getattr(single_table, SDV_SYNTHESIZERS[model])
    metadata_cls = getattr(metadata_module, "Metadata", None)
    data: Any
    if metadata_cls is not None and hasattr(metadata_cls, "detect_from_dataframe"):
        data, metadata = train, metadata_cls.detect_from_dataframe(train)
    elif metadata_cls is not None and hasattr(metadata_cls, "detect_from_dataframes"):
        data = {"table": train}
        metadata = metadata_cls.detect_from_dataframes(data)
    else:
        data, metadata = train, metadata_module.SingleTableMetadata()
        metadata.detect_from_dataframe(train)
    _seed_globals(seed)
    torch = sys.modules.get("torch")  # the neural synthesizers import it themselves
    if torch is not None:
        torch.manual_seed(seed)
    synthesizer = cls(metadata, **params)
    synthesizer.fit(data)
    out = synthesizer.sample(num_rows=int(n))
    if isinstance(out, dict):
        out = out["table"] if "table" in out else next(iter(out.values()))
    return pd.DataFrame(out)


def synthpop_cart(
    train: pd.DataFrame, n: int, seed: int, **params: Any
) -> pd.DataFrame:
    """python-synthpop's CART synthesizer (``pip install python-synthpop``).

    The package's documented pipeline (README of NGO-Algorithm-Audit/python-synthpop):
    ``MissingDataHandler().get_column_dtypes(df)``, ``detect_missingness`` and
    ``apply_imputation``; ``DataProcessor(metadata).preprocess``;
    ``CARTMethod(metadata, smoothing=..., proper=..., minibucket=..., random_state=...)``,
    ``fit`` then ``sample(n)``; ``DataProcessor.postprocess``. ``params`` go to
    ``CARTMethod``.
    """
    synthpop = importlib.import_module("synthpop")
    _seed_globals(seed)
    handler = synthpop.MissingDataHandler()
    metadata = handler.get_column_dtypes(train)
    missing = handler.detect_missingness(train)
    imputed = handler.apply_imputation(train, missing)
    processor = synthpop.DataProcessor(metadata)
    processed = processor.preprocess(imputed)
    options = {"random_state": seed, **params}
    cart = synthpop.CARTMethod(metadata, **options)
    cart.fit(processed)
    return pd.DataFrame(processor.postprocess(cart.sample(int(n))))


def dpmm_pipeline(
    model: str, train: pd.DataFrame, n: int, seed: int, **params: Any
) -> pd.DataFrame:
    """A dpmm pipeline (``pip install dpmm``): ``MSTPipeline``, ``AIMPipeline`` or ``PrivBayesPipeline``.

    dpmm's documented use (its README and docs, "Getting started"; checked with dpmm
    0.1.9): ``MSTPipeline(epsilon=1.0, delta=1e-5, proc_epsilon=0.1)``,
    ``fit(df, domain, random_state=seed)`` and ``generate(n_records=n,
    random_state=seed)``. ``params`` go to the pipeline, except ``domain`` which goes
    to ``fit``: ``{"age": {"lower": 17, "upper": 90}, ...}``, the numeric columns'
    public bounds. Without it dpmm spends part of ε (``proc_epsilon``) finding the
    bounds privately, which fails on small tables; give the bounds of the population
    (they are public knowledge in the audit's threat model). ``epsilon`` defaults to 1.
    """
    pipelines = importlib.import_module("dpmm.pipelines")
    cls = getattr(pipelines, _DPMM_PIPELINES[model])
    options = dict(params)
    domain = options.pop("domain", None)
    options.setdefault("epsilon", 1.0)
    _seed_globals(seed)
    pipeline = cls(**options)
    pipeline.fit(train, domain, random_state=seed)
    return pd.DataFrame(pipeline.generate(n_records=int(n), random_state=seed))


def smartnoise(
    model: str, train: pd.DataFrame, n: int, seed: int, **params: Any
) -> pd.DataFrame:
    """A smartnoise-synth synthesizer (``pip install smartnoise-synth``).

    smartnoise-synth's documented use (its README, "Getting started"):
    ``Synthesizer.create("mst", epsilon=1.0)``, ``fit(df, preprocessor_eps=...)``,
    ``sample(n)``. ``params`` go to ``create``, except ``preprocessor_eps`` (default: a
    tenth of ``epsilon``), which goes to ``fit``; ``epsilon`` defaults to 1.
    """
    snsynth = importlib.import_module("snsynth")
    options = dict(params)
    options.setdefault("epsilon", 1.0)
    preprocessor_eps = options.pop("preprocessor_eps", float(options["epsilon"]) / 10)
    _seed_globals(seed)
    synth = snsynth.Synthesizer.create(model, **options)
    synth.fit(train, preprocessor_eps=preprocessor_eps)
    return pd.DataFrame(synth.sample(int(n)))


def fit_named(
    name: str, train: pd.DataFrame, n: int, seed: int, **params: Any
) -> pd.DataFrame:
    """Train the named generator (a key of :data:`NAMED`) on ``train`` and return ``n`` rows."""
    family, _, model = name.partition(":")
    if name not in NAMED:
        msg = f"unknown generator {name!r}; known: {sorted(NAMED)}."
        raise ValueError(msg)
    if family == "sdv":
        return sdv_synthesizer(model, train, n, seed, **params)
    if family == "synthpop":
        return synthpop_cart(train, n, seed, **params)
    if family == "dpmm":
        return dpmm_pipeline(model, train, n, seed, **params)
    return smartnoise(model, train, n, seed, **params)
