# SPDX-License-Identifier: BSD-3-Clause
"""``audit()``: the generator audit from the tables to the result."""

from __future__ import annotations

import contextlib
import numbers
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._typing import FloatArray, JSONValue, TableLike
from synthrisk._validation import check_int, check_option
from synthrisk.audit.attacks import (
    ATTACKS,
    CLASSIFIERS,
    RAW_POOLED,
    UNKNOWN_CODE,
    AttackName,
    ClassifierName,
    FeatureSpace,
    Reference,
    classifier_scores,
    kernel_density,
    no_box_scores,
)
from synthrisk.audit.bounds import (
    Bound,
    SelectedBound,
    attack_bound,
    mid_ranks,
    selected_bound,
)
from synthrisk.audit.canaries import crafted
from synthrisk.audit.game import RunCache, RunOutcome, play
from synthrisk.audit.generators import (
    GeneratorError,
    GeneratorLike,
    as_fit_sample,
    cache_identity,
    close_generator,
    describe_generator,
    preflight,
    with_timeout,
)
from synthrisk.audit.result import (
    AuditResult,
    CanaryAudit,
    RunFailure,
    TargetAudit,
    method_bounds,
)
from synthrisk.exceptions import InputError, ParameterError, SynthriskError
from synthrisk.metrics import make_context
from synthrisk.metrics.membership.isolation import isolated_training_people
from synthrisk.neighbors import column_ranges, dask_compute, nearest_neighbors
from synthrisk.schema import EncodedTable, Schema, Tables, as_pandas, prepare_tables

__all__ = ["THREAT_MODEL", "audit"]

#: the threat model every audit states in its result
THREAT_MODEL: dict[str, str] = {
    "attacker_knows": (
        "the training algorithm and its settings: the attacker can train the same "
        "generator on tables of their choice (shadow models)"
    ),
    "attacker_holds": (
        "an auxiliary sample of the population (the holdout table given to the audit), "
        "the target's full record, and one synthetic table made from the training set"
    ),
    "targets": (
        "the real people most isolated from every other real person (the isolation rule "
        "of the per-person tests), plus the rows the user names, plus any crafted "
        "canaries (records of extreme values and rare categories inside the tables' "
        "domain, unlike every real row: the generator's worst case)"
    ),
    "game": (
        "in every shadow run the training set is drawn from the auxiliary sample and each "
        "target joins it independently with probability 1/2 (one-run style: every target "
        "is audited by the same runs); the attacker guesses each target's membership "
        "from the run's synthetic table"
    ),
    "guarantee": (
        "a generator that is (epsilon, delta)-differentially private has a true epsilon at "
        "least the reported lower bound, at the stated confidence; the bound says nothing "
        "about attacks or targets the audit did not try, so a small bound is not a proof "
        "of privacy"
    ),
}


def _check_probability(value: Any, *, name: str, low: float, high: float) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not low < float(value) < high
    ):
        msg = f"`{name}` must be a number strictly between {low:g} and {high:g}; got {value!r}."
        raise ParameterError(msg)
    return float(value)


#: shadow outputs normalised together (the normalisation's cost is mostly per column)
BATCH = 32


def _encode_outputs(
    outputs: Sequence[pd.DataFrame],
    tables: Tables,
    schema: Schema,
    example: pd.DataFrame,
) -> list[EncodedTable | GeneratorError]:
    """Normalise and encode shadow outputs in the real tables' encoding.

    The outputs are normalised in one batch (one call of the schema's validation for
    all of them); when the batch fails, each output alone, so that one bad output fails
    only its own run. Categories the encoding does not know get a code unequal to every
    other code and to a missing value.

    Returns
    -------
    list
        Per output, its encoding, or the :class:`GeneratorError` saying why it cannot
        be used (a missing column, values that cannot be read).
    """
    names = schema.names
    out: list[EncodedTable | GeneratorError] = []
    usable: list[int] = []
    for i, output in enumerate(outputs):
        missing = [c for c in names if c not in output.columns]
        if missing:
            msg = (
                f"the generator's output lacks the columns {missing}; it must return the "
                f"training table's columns ({names})."
            )
            out.append(GeneratorError(msg))
        else:
            out.append(GeneratorError("not encoded"))
            usable.append(i)
    if not usable:
        return out
    frames = [
        outputs[i] if list(outputs[i].columns) == names else outputs[i][names]
        for i in usable
    ]
    try:
        batch = _encode_frame(
            pd.concat(frames, ignore_index=True), tables, schema, example
        )
    except GeneratorError:
        if len(usable) == 1:
            out[usable[0]] = _try_encode(frames[0], tables, schema, example)
            return out
        for i, frame in zip(usable, frames, strict=True):
            out[i] = _try_encode(frame, tables, schema, example)
        return out
    start = 0
    for i, frame in zip(usable, frames, strict=True):
        stop = start + len(frame)
        out[i] = EncodedTable(
            numeric=batch.numeric[start:stop],
            codes=batch.codes[start:stop],
            numeric_names=batch.numeric_names,
            categorical_names=batch.categorical_names,
        )
        start = stop
    return out


def _try_encode(
    frame: pd.DataFrame, tables: Tables, schema: Schema, example: pd.DataFrame
) -> EncodedTable | GeneratorError:
    try:
        return _encode_frame(frame, tables, schema, example)
    except GeneratorError as exc:
        return exc


def _encode_frame(
    frame: pd.DataFrame, tables: Tables, schema: Schema, example: pd.DataFrame
) -> EncodedTable:
    try:
        normalised = prepare_tables(example, frame, None, metadata=schema)
    except SynthriskError as exc:
        msg = f"the generator's output cannot be read as the training table's columns: {exc}"
        raise GeneratorError(msg) from exc
    encoded = tables.encoder.transform(normalised.synthetic)
    codes = encoded.codes.copy()
    for j, name in enumerate(encoded.categorical_names):
        unknown = (codes[:, j] < 0) & normalised.synthetic[name].notna().to_numpy()
        codes[unknown, j] = UNKNOWN_CODE
    return EncodedTable(
        numeric=encoded.numeric,
        codes=codes,
        numeric_names=encoded.numeric_names,
        categorical_names=encoded.categorical_names,
    )


def _selection_runs(runs: np.ndarray, share: float) -> np.ndarray:
    """Runs that choose thresholds and train the classifier: evenly spread, by run number."""
    r = runs.astype(np.float64)
    return np.floor((r + 1) * share) > np.floor(r * share)


def _best(bounds: Mapping[str, Bound]) -> tuple[float, str | None]:
    best, name = 0.0, None
    for attack, bound in bounds.items():
        if bound.epsilon_lower > best:
            best, name = bound.epsilon_lower, attack
    return best, name


#: one attack's pooled observations: selection scores and labels, evaluation scores and labels
Pool = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _pooled(
    scores: FloatArray,
    member: np.ndarray,
    selection: np.ndarray,
    targets: np.ndarray,
    attack: str,
) -> Pool:
    """One attack's observations pooled over ``targets``: selection scores and labels,
    evaluation scores and labels. Each target's scores are ranked among its own
    selection scores, so that targets can be pooled, except for an attack whose own
    scale calibrates the targets (``RAW_POOLED``)."""
    sel_pool, sel_lab, ev_pool, ev_lab = [], [], [], []
    for t in targets:
        sel_s, ev_s = scores[selection, t], scores[~selection, t]
        if attack in RAW_POOLED:
            sel_pool.append(sel_s)
            ev_pool.append(ev_s)
        else:
            sel_pool.append(mid_ranks(sel_s, sel_s))
            ev_pool.append(mid_ranks(sel_s, ev_s))
        sel_lab.append(member[selection, t])
        ev_lab.append(member[~selection, t])
    return (
        np.concatenate(sel_pool),
        np.concatenate(sel_lab),
        np.concatenate(ev_pool),
        np.concatenate(ev_lab),
    )


def audit(
    generator: GeneratorLike,
    real: TableLike,
    holdout: TableLike,
    *,
    n_targets: int = 10,
    target_rows: Sequence[int] = (),
    n_canaries: int = 0,
    n_runs: int = 200,
    train_size: int | None = None,
    n_synthetic: int | None = None,
    attacks: Sequence[str] = ATTACKS,
    classifier: str = "ridge",
    delta: float = 0.0,
    confidence_level: float = 0.95,
    selection_share: float = 0.5,
    metadata: Mapping[str, Any] | Schema | None = None,
    n_jobs: int = 1,
    max_seconds: float | None = None,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    run_timeout: float | None = None,
    cache: str | os.PathLike[str] | None = None,
    client: Any | None = None,
    scheduler: str | None = None,
) -> AuditResult:
    """Audit a generator: shadow-model membership attacks and an effective-ε lower bound.

    The generator is trained ``n_runs`` times on shadow training sets drawn from
    ``holdout`` (the attacker's sample of the population), each target joining each
    training set independently with probability 1/2 (Steinke, Nasr & Jagielski 2023,
    arXiv 2305.08846). Six attacks score every target against every output
    (:mod:`synthrisk.audit.attacks`); thresholds are chosen on the selection runs and
    ε is bounded on the others (:mod:`synthrisk.audit.bounds`).

    Parameters
    ----------
    generator : callable, str or adapter
        ``fit_sample(train, n, seed) -> DataFrame``; a command template such as
        ``"gen --train {train} --out {out} --rows {n} --seed {seed}"``
        (:class:`~synthrisk.audit.CommandGenerator`); ``"sdv:gaussian_copula"``,
        ``"sdv:ctgan"``, ``"sdv:tvae"`` or ``"sdv:copula_gan"``
        (:class:`~synthrisk.audit.SDVGenerator`); ``"synthpop:cart"``, ``"dpmm:mst"``
        and the other named generators (:class:`~synthrisk.audit.NamedGenerator`); a
        :class:`~synthrisk.audit.PythonGenerator` for another interpreter.
    real : DataFrame
        The real training table: where the targets come from.
    holdout : DataFrame
        Real rows of the same population that the targets are not among: the attacker's
        auxiliary sample and the source of the shadow training sets.
    n_targets : int, default=10
        Most isolated real people audited (0: only ``target_rows``).
    target_rows : sequence of int, default=()
        Rows of ``real`` (0-based positions) audited as well.
    n_canaries : int, default=0
        Worst-case canaries inserted as targets as well: records crafted from the
        tables' domain to be as unlike every real row as possible
        (:func:`synthrisk.audit.canaries.craft_canaries`; Annamalai, Ganev & De
        Cristofaro 2024, arXiv 2405.10994). Each joins each shadow training set with
        probability 1/2 like the other targets. Their bound
        (``result.canaries.epsilon_lower``) measures the generator's worst case, the
        natural targets' (``result.epsilon_lower_natural``) the real people's, each at
        ``confidence_level``; the headline is the larger of the two, each counted at
        half the error (Bonferroni over the two groups).
    n_runs : int, default=200
        Shadow runs (the generator is trained this many times).
    train_size : int, default=None
        Holdout rows in each shadow training set (the included targets come on top);
        None: the smaller of ``len(real)`` and half the holdout.
    n_synthetic : int, default=None
        Rows the generator returns per run; None: ``train_size``.
    attacks : sequence of str, default=("dcr", "dcr_diff", "knn", "density", "gen_lra", "classifier")
        The attacks run. The bound's confidence is shared among them (Bonferroni): each
        attack's bound holds at ``1 - (1 - confidence_level) / len(attacks)``.
    classifier : {"ridge", "logistic", "boosting"}, default="ridge"
        The set classifier (:func:`synthrisk.audit.attacks.classifier_scores`): a ridge
        classifier of all targets at once (fast), logistic regression or histogram
        gradient boosting per target.
    delta : float, default=0.0
        The δ of (ε, δ)-differential privacy the bound is for.
    confidence_level : float, default=0.95
        Confidence of the bounds (of the maximum over attacks).
    selection_share : float, default=0.5
        Share of the runs that choose thresholds and train the classifier; the others
        give the reported numbers.
    metadata : mapping or Schema, default=None
        Column kinds, as for :func:`synthrisk.evaluate`.
    n_jobs : int, default=1
        Worker processes for the generator runs (threads when the generator cannot
        be pickled).
    max_seconds : float, default=None
        Budget: no run starts after this many seconds; the bounds are those of the runs
        done.
    seed : int, default=0
        Seed of the whole audit; run ``r`` draws from ``(seed, r)`` only.
    progress : callable, default=None
        ``progress(done, n_runs)`` after each run; silent by default.
    run_timeout : float, default=None
        Seconds one generator call may take. A command or other-interpreter generator
        is killed after it; an in-process callable then runs each call in a child
        process that is killed after it. A run that runs past it (or crashes) is
        retried once with a new seed, then left out and listed in ``failures``; None
        waits for ever.
    cache : path, default=None
        A folder keeping every run's output (:class:`~synthrisk.audit.game.RunCache`):
        an audit re-run with the same generator, tables, settings and seed, and more
        runs, calls the generator only for the new runs.
    client : dask.distributed.Client, default=None
        Run the shadow runs on this Dask cluster (its workers' threads replace
        ``n_jobs``; the generator must be picklable, as cloudpickle sees it). The
        client stays open.
    scheduler : str, default=None
        Address of a running Dask scheduler (``tcp://host:8786``) to run the shadow runs
        on; needs ``pip install 'synthrisk[dask]'``. Each run is seeded by its number,
        so the result is the same as in this process, bit for bit.

    Returns
    -------
    AuditResult

    Raises
    ------
    ParameterError
        For a value out of range, an unknown attack, or a target row outside ``real``.
    InputError
        For tables that cannot be used (see :func:`synthrisk.evaluate`), or a holdout
        too small for ``train_size``.
    MissingDependencyError
        When an SDV or named generator's package is not installed (before any run).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from synthrisk.audit import audit
    >>> g = np.random.default_rng(0)
    >>> real = pd.DataFrame({"x": g.normal(size=60), "c": g.choice(list("ab"), 60)})
    >>> holdout = pd.DataFrame({"x": g.normal(size=120), "c": g.choice(list("ab"), 120)})
    >>> def copier(train, n, seed):
    ...     return train.sample(n, replace=True, random_state=seed)
    >>> result = audit(copier, real, holdout, n_targets=5, n_runs=40,
    ...                attacks=["dcr"], train_size=30)
    >>> result.epsilon_lower > 0, result.verdict(max_epsilon=0.1).passed
    (True, False)
    """
    started = time.perf_counter()
    if run_timeout is not None and (
        isinstance(run_timeout, bool)
        or not isinstance(run_timeout, numbers.Real)
        or not run_timeout > 0
    ):
        msg = f"`run_timeout` must be a positive number of seconds or None; got {run_timeout!r}."
        raise ParameterError(msg)
    run_timeout = None if run_timeout is None else float(run_timeout)
    fit_sample = with_timeout(as_fit_sample(generator), run_timeout)
    preflight(fit_sample)
    run_cache = None if cache is None else RunCache(cache, cache_identity(fit_sample))
    n_targets = check_int(n_targets, name="n_targets", minimum=0)
    n_canaries = check_int(n_canaries, name="n_canaries", minimum=0)
    n_runs = check_int(n_runs, name="n_runs", minimum=4)
    n_jobs = check_int(n_jobs, name="n_jobs", minimum=1)
    seed = check_int(seed, name="seed", minimum=0)
    if client is not None and scheduler is not None:
        msg = "give either `client` or `scheduler`, not both."
        raise ParameterError(msg)
    chosen = list(attacks) if not isinstance(attacks, str) else [attacks]
    if not chosen:
        msg = f"`attacks` must name at least one of {list(ATTACKS)}; got an empty list."
        raise ParameterError(msg)
    for name in chosen:
        check_option(name, name="attacks", allowed=ATTACKS)
    chosen_attacks: list[AttackName] = [a for a in ATTACKS if a in chosen]
    model: ClassifierName = check_option(
        classifier, name="classifier", allowed=CLASSIFIERS
    )  # type: ignore[assignment]
    delta = (
        0.0
        if delta == 0 and not isinstance(delta, bool)
        else _check_probability(delta, name="delta", low=0.0, high=1.0)
    )
    confidence_level = _check_probability(
        confidence_level, name="confidence_level", low=0.0, high=1.0
    )
    selection_share = _check_probability(
        selection_share, name="selection_share", low=0.0, high=1.0
    )
    if max_seconds is not None:
        if (
            isinstance(max_seconds, bool)
            or not isinstance(max_seconds, numbers.Real)
            or not max_seconds > 0
        ):
            msg = f"`max_seconds` must be a positive number of seconds or None; got {max_seconds!r}."
            raise ParameterError(msg)
        max_seconds = float(max_seconds)
    if progress is not None and not callable(progress):
        msg = f"`progress` must be a callable progress(done, total) or None; got {progress!r}."
        raise ParameterError(msg)

    real_frame = as_pandas(real, name="real").reset_index(drop=True)
    pool_frame = as_pandas(holdout, name="holdout").reset_index(drop=True)
    tables = prepare_tables(
        real_frame, real_frame.iloc[:1], pool_frame, metadata=metadata
    )
    train_size = (
        min(len(real_frame), len(pool_frame) // 2)
        if train_size is None
        else check_int(train_size, name="train_size", minimum=1)
    )
    if train_size < 1 or train_size > len(pool_frame):
        msg = (
            f"`train_size` must be between 1 and the holdout's {len(pool_frame)} rows; got "
            f"{train_size}. Give a larger holdout or a smaller `train_size`."
        )
        raise InputError(msg)
    n_synthetic = (
        train_size
        if n_synthetic is None
        else check_int(n_synthetic, name="n_synthetic", minimum=1)
    )

    # targets: the most isolated real people, then the named rows
    context = make_context(
        "audit", seed=seed, working_memory=None, backend=None, progress=False
    )
    isolated = isolated_training_people(tables, person=None, context=context)
    isolation_of = dict(
        zip(isolated.rows.tolist(), isolated.isolation.tolist(), strict=True)
    )
    rows: list[int] = [int(r) for r in isolated.rows[:n_targets]]
    sources: list[str] = ["vulnerable"] * len(rows)
    for value in target_rows:
        row = check_int(value, name="target_rows", minimum=0)
        if row >= len(real_frame):
            msg = f"`target_rows` names row {row}, but `real` has {len(real_frame)} rows (0-based positions)."
            raise ParameterError(msg)
        if row not in rows:
            rows.append(row)
            sources.append("named")
    if not rows and not n_canaries:
        msg = (
            "no target to audit: set `n_targets` or `n_canaries` above 0 or name rows "
            "in `target_rows`."
        )
        raise ParameterError(msg)
    target_index = np.asarray(rows, dtype=np.int64)
    radius = np.array([isolation_of.get(r, 0.0) for r in rows], dtype=np.float64)

    schema = Schema(tuple(tables.schema.modelable))
    example = tables.real[schema.names].iloc[:1]
    real_enc, pool_enc = tables.encoded("real"), tables.encoded("holdout")
    targets_enc = real_enc.take(target_index)
    target_frame = real_frame.iloc[target_index].reset_index(drop=True)
    n_natural = len(rows)
    if n_canaries:
        canaries = crafted(tables, real_frame, pool_frame, n_canaries, seed=seed)
        targets_enc = EncodedTable(
            numeric=np.vstack([targets_enc.numeric, canaries.encoded.numeric]),
            codes=np.vstack([targets_enc.codes, canaries.encoded.codes]),
            numeric_names=targets_enc.numeric_names,
            categorical_names=targets_enc.categorical_names,
        )
        radius = np.concatenate([radius, canaries.isolation])
        target_frame = pd.concat([target_frame, canaries.frame], ignore_index=True)
    scale = column_ranges(np.vstack([real_enc.numeric, pool_enc.numeric]))
    reference = Reference(
        table=pool_enc,
        density=kernel_density(targets_enc, pool_enc, scale=scale, radius=radius),
        dcr=nearest_neighbors(
            targets_enc, pool_enc, k=1, distance="dcr", scale=scale, backend="numpy"
        ).distances[:, 0],
    )
    population = EncodedTable(
        numeric=np.vstack([real_enc.numeric, pool_enc.numeric]),
        codes=np.vstack([real_enc.codes, pool_enc.codes]),
        numeric_names=real_enc.numeric_names,
        categorical_names=real_enc.categorical_names,
    )
    feature_space = FeatureSpace.fit(population)
    setup_seconds = time.perf_counter() - started

    # the game
    n_t = n_natural + n_canaries
    completed: list[int] = []
    included: list[np.ndarray] = []
    scores: dict[str, list[FloatArray]] = {
        a: [] for a in chosen_attacks if a != "classifier"
    }
    features: list[FloatArray] = []
    failures: list[RunFailure] = []
    retries: list[RunFailure] = []
    no_box = frozenset(a for a in chosen_attacks if a != "classifier")
    cached = 0
    generator_seconds = 0.0
    scoring_seconds = 0.0
    cluster = contextlib.ExitStack()
    executor = None
    if client is not None or scheduler is not None:
        dask_client = cluster.enter_context(
            dask_compute(client=client, scheduler=scheduler)
        )
        executor = dask_client.get_executor()
        n_jobs = max(1, sum(dask_client.nthreads().values()))
    outcomes = play(
        fit_sample,
        pool_frame,
        target_frame,
        n_runs=n_runs,
        train_size=train_size,
        n_synthetic=n_synthetic,
        seed=seed,
        n_jobs=n_jobs,
        max_seconds=max_seconds,
        progress=progress,
        run_timeout=run_timeout,
        cache=run_cache,
        executor=executor,
    )
    buffer: list[RunOutcome] = []

    def score(batch: list[RunOutcome]) -> float:
        tick = time.perf_counter()
        encodings = _encode_outputs(
            [o.synthetic for o in batch if o.synthetic is not None],
            tables,
            schema,
            example,
        )
        for outcome, encoded in zip(batch, encodings, strict=True):
            if isinstance(encoded, GeneratorError):
                failures.append(RunFailure(outcome.draw.run, str(encoded)))
                continue
            run_scores = no_box_scores(
                targets_enc,
                encoded,
                scale=scale,
                radius=radius,
                reference=reference,
                attacks=no_box,
            )
            for attack in scores:
                scores[attack].append(run_scores[attack])  # type: ignore[index]
            if "classifier" in chosen_attacks:
                features.append(feature_space.features(encoded))
            completed.append(outcome.draw.run)
            included.append(outcome.draw.included)
        return time.perf_counter() - tick

    with cluster, contextlib.ExitStack() as workers:
        workers.callback(close_generator, fit_sample)  # persistent workers stop here
        for outcome in outcomes:
            generator_seconds += outcome.seconds
            scoring_seconds += outcome.prepare_seconds
            cached += outcome.cached
            if outcome.synthetic is not None and outcome.attempts > 1:
                retries.append(
                    RunFailure(outcome.draw.run, outcome.error or "unknown failure")
                )
            if outcome.synthetic is None:
                failures.append(
                    RunFailure(outcome.draw.run, outcome.error or "unknown failure")
                )
                continue
            buffer.append(outcome)
            if len(buffer) == BATCH:
                scoring_seconds += score(buffer)
                buffer = []
    if buffer:
        scoring_seconds += score(buffer)
    failures.sort(key=lambda f: f.run)

    # the bounds
    tick = time.perf_counter()
    runs = np.asarray(completed, dtype=np.int64)
    member = np.asarray(included, dtype=bool).reshape(len(completed), n_t)
    selection = _selection_runs(runs, selection_share)
    score_of: dict[str, FloatArray] = {
        a: np.asarray(v, dtype=np.float64).reshape(len(completed), n_t)
        for a, v in scores.items()
    }
    if "classifier" in chosen_attacks:
        score_of["classifier"] = classifier_scores(
            np.asarray(features, dtype=np.float64).reshape(len(completed), -1)
            if features
            else np.zeros((0, 0)),
            member,
            selection,
            classifier=model,
            seed=seed,
        )
    attack_level = 1 - (1 - confidence_level) / len(chosen_attacks)
    per_target: list[dict[str, Bound]] = [{} for _ in range(n_t)]
    for attack in chosen_attacks:
        s = score_of[attack]
        for t in range(n_t):
            per_target[t][attack] = attack_bound(
                s[selection, t],
                member[selection, t],
                s[~selection, t],
                member[~selection, t],
                delta=delta,
                confidence_level=attack_level,
            )
    groups = {
        "natural": np.arange(n_natural),
        "canaries": np.arange(n_natural, n_t),
    }
    overall_of: dict[str, dict[str, Bound]] = {}
    selected_of: dict[str, SelectedBound] = {}
    pools_of: dict[str, dict[str, Pool]] = {}
    for group, members in groups.items():
        if not members.size:
            continue
        pools = pools_of[group] = {
            attack: _pooled(score_of[attack], member, selection, members, attack)
            for attack in chosen_attacks
        }
        overall_of[group] = {
            attack: attack_bound(*pool, delta=delta, confidence_level=attack_level)
            for attack, pool in pools.items()
        }
        selected_of[group] = selected_bound(
            pools, delta=delta, confidence_level=confidence_level
        )
    # the headline: with one group of targets, its chosen test; with both, the larger
    # of the two groups' chosen tests (the tests reported side by side), each counted
    # again at half the error (Bonferroni over the two groups), so that the maximum
    # holds at `confidence_level` and never exceeds the larger side-by-side bound
    headline_of = selected_of
    if len(selected_of) == 2:
        half = 1 - (1 - confidence_level) / 2
        headline_of = {
            group: selected_bound(
                pools,
                delta=delta,
                confidence_level=confidence_level,
                count_level=half,
            )
            for group, pools in pools_of.items()
        }
    headline_group = max(
        headline_of,
        key=lambda g: (headline_of[g].epsilon_lower, g == "natural"),
    )
    selected = headline_of[headline_group]
    epsilon, best_attack = selected.epsilon_lower, selected.attack
    overall = overall_of.get("natural", {})

    def one_run_of(group: Mapping[str, Bound]) -> float | None:
        if delta != 0:
            return None
        return max(
            (float(b.epsilon_lower_one_run or 0.0) for b in group.values()),
            default=0.0,
        )

    canary_audit = None
    if "canaries" in overall_of:
        canary_audit = CanaryAudit(
            n_canaries=n_canaries,
            epsilon_lower=selected_of["canaries"].epsilon_lower,
            best_attack=selected_of["canaries"].attack,
            overall=overall_of["canaries"],
            bounds=method_bounds(overall_of["canaries"], selected_of["canaries"]),
            epsilon_lower_one_run=one_run_of(overall_of["canaries"]),
        )
    targets = []
    for t in range(n_t):
        eps_t, best_t = _best(per_target[t])
        natural = t < n_natural
        targets.append(
            TargetAudit(
                row=rows[t] if natural else None,
                source=sources[t] if natural else "canary",  # type: ignore[arg-type]
                isolation=float(radius[t]),
                n_included=int(member[:, t].sum()),
                attacks=per_target[t],
                epsilon_lower=eps_t,
                best_attack=best_t,
                canary=None if natural else t - n_natural,
            )
        )
    bounds_seconds = time.perf_counter() - tick
    n_done = len(completed) + len(failures)
    stopped = None
    if n_done < n_runs:
        stopped = (
            f"the budget of {max_seconds:g} s ran out after {n_done} of {n_runs} runs; "
            "the bounds are those of the runs done."
        )
    settings: dict[str, JSONValue] = {
        "n_runs_requested": n_runs,
        "n_targets": n_targets,
        "target_rows": [int(r) for r in target_rows],
        "n_canaries": n_canaries,
        "train_size": train_size,
        "n_synthetic": n_synthetic,
        "selection_share": selection_share,
        "delta": delta,
        "confidence_level": confidence_level,
        "attack_confidence_level": attack_level,
        "multiplicity": (
            "headline: one test chosen on the selection runs, no correction"
            + (
                "; with both natural targets and canaries, the larger of the two "
                "groups' chosen tests, each at half the error (Bonferroni over 2)"
                if len(selected_of) == 2
                else ""
            )
            + f"; per-attack bounds: Bonferroni over {len(chosen_attacks)} attack(s)"
        ),
        "attacks": list(chosen_attacks),
        "classifier": model,
        "seed": seed,
        "n_jobs": n_jobs,
        "dask": executor is not None,
        "max_seconds": max_seconds,
        "run_timeout": run_timeout,
    }
    run_info: dict[str, JSONValue] = {
        "completed": len(completed),
        "selection": int(selection.sum()),
        "evaluation": int((~selection).sum()),
        "failed": len(failures),
        "retried": len(retries),
        "cached": int(cached),
        "stopped_early": stopped,
        "generator_seconds": generator_seconds,
        "audit_seconds": setup_seconds + scoring_seconds + bounds_seconds,
        "setup_seconds": setup_seconds,
        "scoring_seconds": scoring_seconds,
        "bounds_seconds": bounds_seconds,
        "total_seconds": time.perf_counter() - started,
    }
    return AuditResult(
        generator=describe_generator(fit_sample),
        threat_model=dict(THREAT_MODEL),
        settings=settings,
        runs=run_info,
        epsilon_lower=epsilon,
        best_attack=best_attack,
        overall=overall,
        targets=tuple(targets),
        failures=tuple(failures),
        epsilon_lower_one_run=one_run_of(overall) if overall else None,
        retries=tuple(retries),
        bounds=(
            method_bounds(overall, selected_of["natural"])
            if "natural" in selected_of
            else {}
        ),
        epsilon_lower_natural=(
            selected_of["natural"].epsilon_lower if "natural" in selected_of else None
        ),
        selected_targets=headline_group,  # type: ignore[arg-type]
        canaries=canary_audit,
    )
