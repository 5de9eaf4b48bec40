# SPDX-License-Identifier: BSD-3-Clause
"""The walk over groups sorted by one numeric column, and the first pass of the grouped
scan over nearby groups, equal the numpy reference backend, bit for bit and index for
index, whatever their columns."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthrisk.neighbors import (
    _nearby,
    _projection,
    _search,
    distance_spec,
    nearest_neighbors,
    numpy_backend,
)
from synthrisk.neighbors._projection import Plan, grouped_rows, row_groups
from synthrisk.neighbors._protocol import Search
from synthrisk.schema.encoding import EncodedTable


def _table(
    rng: np.random.Generator,
    n: int,
    n_num: int,
    n_cat: int,
    *,
    cardinality: int,
    nan: float,
    coarse: bool,
) -> EncodedTable:
    num = rng.normal(size=(n, n_num))
    if coarse:  # few distinct values: many ties in the projection column
        num = np.round(num * 2) / 2
    num[rng.random(num.shape) < nan] = np.nan
    codes = rng.integers(-1, cardinality, (n, n_cat))
    return EncodedTable(
        num,
        codes,
        tuple(f"x{f}" for f in range(n_num)),
        tuple(f"c{c}" for c in range(n_cat)),
    )


def _capture(
    monkeypatch: pytest.MonkeyPatch,
    query: EncodedTable,
    reference: EncodedTable,
    **kw: Any,
) -> tuple[Search, tuple[np.ndarray, np.ndarray]]:
    """The Search that nearest_neighbors hands a backend, and the numpy backend's answer."""
    seen: list[Search] = []

    class Recorder:
        @staticmethod
        def kneighbors(search: Search) -> tuple[np.ndarray, np.ndarray]:
            seen.append(search)
            return numpy_backend.kneighbors(search)

    with monkeypatch.context() as patch:
        patch.setattr(_search, "get_backend", lambda name: Recorder)
        found = nearest_neighbors(query, reference, backend="numpy", **kw)
    return seen[0], (found.distances, found.indices)


def _assert_same(
    got: tuple[np.ndarray, np.ndarray], want: tuple[np.ndarray, np.ndarray]
) -> None:
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@st.composite
def searches(draw: st.DrawFn) -> dict[str, Any]:
    n_num = draw(st.integers(0, 3))
    n_cat = draw(st.integers(0 if n_num else 1, 3))
    n_ref = draw(st.integers(1, 120))
    params: dict[str, Any] = {
        "seed": draw(st.integers(0, 2**32 - 1)),
        "n_num": n_num,
        "n_cat": n_cat,
        "n_query": draw(st.integers(1, 40)),
        "n_ref": n_ref,
        "cardinality": draw(st.integers(1, 4)),
        "nan": draw(st.sampled_from([0.0, 0.1, 0.4])),
        "coarse": draw(st.booleans()),
        "k": draw(st.integers(1, min(n_ref, 5))),
        "distance": draw(st.sampled_from(["dcr", "gower"])),
        "missing": draw(st.sampled_from(["mismatch", "anonymeter"])),
        "weights": draw(
            st.none()
            | st.lists(
                st.sampled_from([0.0, 0.1, 0.5, 1.0, 3.0, 100.0]),
                min_size=n_num + n_cat,
                max_size=n_num + n_cat,
            )
        ),
        "radius": draw(st.booleans()),
    }
    return params


def _draw_tables(
    params: dict[str, Any],
) -> tuple[EncodedTable, EncodedTable, dict[str, Any]]:
    rng = np.random.default_rng(params["seed"])
    shape = {
        "n_num": params["n_num"],
        "n_cat": params["n_cat"],
        "cardinality": params["cardinality"],
        "nan": params["nan"],
        "coarse": params["coarse"],
    }
    query = _table(rng, params["n_query"], **shape)
    reference = _table(rng, params["n_ref"], **shape)
    kw: dict[str, Any] = {"k": params["k"], "distance": params["distance"]}
    if params["distance"] == "gower":
        kw["missing"] = params["missing"]
    if params["weights"] is not None:
        kw["weights"] = np.asarray(params["weights"])
    if params["radius"]:
        kw["max_distance"] = rng.random(params["n_query"]) * (
            params["n_num"] + params["n_cat"]
        )
    return query, reference, kw


# gower ranges of an all-missing column: numpy warns, the distance is well defined
@pytest.mark.filterwarnings("ignore:All-NaN slice encountered:RuntimeWarning")
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(params=searches())
def test_every_plan_matches_numpy(
    params: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    query, reference, kw = _draw_tables(params)
    search, want = _capture(monkeypatch, query, reference, **kw)
    n_num, n_cat = params["n_num"], params["n_cat"]
    key_sets = [
        np.arange(n_cat),
        np.arange(0),
        np.arange(n_cat)[::2],
        np.arange(n_cat)[1:],
    ]
    for keys in key_sets:
        for column in range(-1, n_num):
            got = _projection.kneighbors(
                search, Plan(np.asarray(keys, dtype=np.int64), column)
            )
            _assert_same(got, want)


@pytest.fixture
def eager_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the numba backend walk wherever a numeric column exists, piloting every search."""
    monkeypatch.setattr(_projection, "_ROWS_PER_GROUP", 1)
    monkeypatch.setattr(_projection, "_PILOT_PAIRS", 0)
    monkeypatch.setattr(_projection, "_PILOT_RATIO", np.inf)
    monkeypatch.setattr(_projection, "_MIN_PAIRS", 0)


@pytest.mark.filterwarnings("ignore:All-NaN slice encountered:RuntimeWarning")
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(params=searches())
def test_numba_backend_with_walk_matches_numpy(
    params: dict[str, Any], eager_plan: None
) -> None:
    query, reference, kw = _draw_tables(params)
    want = nearest_neighbors(query, reference, backend="numpy", **kw)
    got = nearest_neighbors(query, reference, backend="numba", **kw)
    np.testing.assert_array_equal(got.distances, want.distances)
    np.testing.assert_array_equal(got.indices, want.indices)


@pytest.mark.parametrize("n_cat", [9, 12])
def test_weighted_wide_table_matches_numpy(
    n_cat: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a dominant numeric column (SynthEval's weights) over 9 or 12 categorical columns:
    # the plan keeps only the heaviest categorical columns as keys, and more than
    # _MASK_COLUMNS columns sum their tail after the table lookup
    rng = np.random.default_rng(n_cat)
    query = _table(rng, 300, 3, n_cat, cardinality=3, nan=0.05, coarse=False)
    reference = _table(rng, 2000, 3, n_cat, cardinality=3, nan=0.05, coarse=False)
    weights = np.r_[100.0, 3.0, 1.0, rng.uniform(0.3, 1.7, n_cat)]
    monkeypatch.setattr(_projection, "_ROWS_PER_GROUP", 64)
    monkeypatch.setattr(_projection, "_MIN_PAIRS", 0)
    for k, radius in ((1, None), (5, rng.random(300) * 3)):
        kw: dict[str, Any] = {
            "k": k,
            "distance": "gower",
            "weights": weights,
            "max_distance": radius,
        }
        search, want = _capture(monkeypatch, query, reference, **kw)
        how = _projection.plan(search)
        assert how is not None
        assert how.column == 0
        assert 0 < how.keys.size < n_cat
        _assert_same(_projection.kneighbors(search, how), want)
        got = nearest_neighbors(query, reference, backend="numba", **kw)
        _assert_same((got.distances, got.indices), want)


def test_plan_declines_weak_projection(monkeypatch: pytest.MonkeyPatch) -> None:
    # unweighted dcr over many distinct code combinations: categorical bounds prune
    # better than any numeric column, the grouped scan keeps the search
    rng = np.random.default_rng(3)
    reference = _table(rng, 3000, 2, 4, cardinality=8, nan=0.0, coarse=False)
    search = Search(
        reference.numeric[:5],
        reference.codes[:5],
        reference.numeric,
        reference.codes,
        distance_spec("dcr", reference.numeric, reference.numeric, 4)[0],
        1,
    )
    monkeypatch.setattr(_projection, "_MIN_PAIRS", 0)
    assert _projection.plan(search) is None
    # small searches keep the grouped scan whatever the columns
    monkeypatch.setattr(_projection, "_MIN_PAIRS", 10**9)
    strong = dataclasses.replace(
        search,
        spec=search.spec.weighted(
            np.r_[100.0, 100.0, 0.1, 0.1, 0.1, 0.1], "dcr", n_numeric=2, n_categorical=4
        ),
    )
    assert _projection.plan(strong) is None
    monkeypatch.setattr(_projection, "_MIN_PAIRS", 0)
    assert _projection.plan(strong) is not None


def test_plan_pilots_the_projection_column(monkeypatch: pytest.MonkeyPatch) -> None:
    # column 0 has the larger typical term but a value shared by half the rows; the
    # pilot sees that column 1 looks at fewer rows
    rng = np.random.default_rng(5)
    n = 4000
    num = np.c_[np.where(rng.random(n) < 0.5, 0.5, rng.random(n)), rng.random(n) * 0.4]
    codes = rng.integers(0, 2, (n, 1))
    spec = distance_spec("dcr", num, num, 1, scale=np.ones(2))[0]
    search = Search(num[:1000], codes[:1000], num, codes, spec, 1)
    monkeypatch.setattr(_projection, "_PILOT_PAIRS", 0)
    monkeypatch.setattr(_projection, "_MIN_PAIRS", 0)
    how = _projection.plan(search)
    assert how is not None
    assert how.column == 1
    want = numpy_backend.kneighbors(search)
    _assert_same(_projection.kneighbors(search, how), want)


class _Costs:
    """A fake clock advanced by the pilot's searches: a fixed cost plus one per query row."""

    def __init__(self, walk: tuple[float, float], scan: tuple[float, float]) -> None:
        self.now = 0.0
        self.walk, self.scan = walk, scan
        self.scanned: list[int] = []

    def clock(self) -> float:
        return self.now

    def run_scan(self, search: Search) -> None:
        self.scanned.append(search.q_num.shape[0])
        self.now += self.scan[0] + self.scan[1] * search.q_num.shape[0]


@pytest.mark.parametrize(
    ("walk", "scan", "walks"),
    [
        ((0.0, 1e-2), (0.0, 1e-3), False),  # the scan is 10 times faster per row
        ((0.0, 1e-3), (0.0, 1e-2), True),  # the walk is
        # cheaper rows, but a fixed cost above the walk's whole search: estimates
        # are the fixed cost plus the pilot's cost per row times the query rows
        ((0.0, 1e-2), (100.0, 1e-3), True),
    ],
)
def test_pilot_times_the_scan_and_keeps_the_faster(
    walk: tuple[float, float],
    scan: tuple[float, float],
    walks: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(5)
    n = 4000
    num = np.c_[rng.random(n), rng.random(n) * 0.4]
    codes = rng.integers(0, 2, (n, 1))
    spec = distance_spec("dcr", num, num, 1, scale=np.ones(2))[0]
    search = Search(num[:1000], codes[:1000], num, codes, spec, 1)
    monkeypatch.setattr(_projection, "_PILOT_PAIRS", 0)
    monkeypatch.setattr(_projection, "_MIN_PAIRS", 0)
    costs = _Costs(walk, scan)
    original = _projection._search

    def timed_walk(search: Search, how: Plan) -> Any:
        costs.now += walk[0] + walk[1] * search.q_num.shape[0]
        return original(search, how)

    monkeypatch.setattr(_projection, "_search", timed_walk)
    pilots: dict[tuple[Any, ...], int] = {}
    how = _projection.plan(
        search, pilots=pilots, scan=costs.run_scan, clock=costs.clock
    )
    # the scan ran on one row (untimed, then timed) and on the pilot's rows
    assert costs.scanned == [1, 1, _projection._PILOT_ROWS]
    assert (how is not None) is walks
    assert list(pilots.values()) == [how.column if how else _projection.SCAN]
    # the choice is shared by later searches of the same reference: no new pilot
    again = _projection.plan(
        search, pilots=pilots, scan=costs.run_scan, clock=costs.clock
    )
    assert len(costs.scanned) == 3
    assert (again is not None) is walks
    # whichever the pilot picks, the numba backend's neighbours are the numpy ones
    want = numpy_backend.kneighbors(search)
    if how is not None:
        _assert_same(_projection.kneighbors(search, how), want)


def test_prefer_scan_only_when_faster() -> None:
    assert _projection.prefer_scan(2.0, 1.0)
    assert not _projection.prefer_scan(1.0, 2.0)
    assert not _projection.prefer_scan(1.0, 1.0)  # a tie keeps the walk


def test_pilot_of_the_scan_runs_the_first_pass_as_the_whole_search_would() -> None:
    # the first pass runs on searches of at least _nearby._MIN_PAIRS pairs: a pilot
    # of few rows passes the whole search's pairs, so that it times the same path
    from synthrisk.neighbors import _kernels, numba_backend

    rng = np.random.default_rng(8)
    reference = _table(rng, 3000, 2, 6, cardinality=6, nan=0.0, coarse=False)
    spec = distance_spec("dcr", reference.numeric, reference.numeric, 6)[0]
    search = Search(
        reference.numeric[:4],
        reference.codes[:4],
        reference.numeric,
        reference.codes,
        spec,
        3,
    )
    group_codes, group_start, order = numba_backend.group_reference(reference.codes)
    terms, cat_w = _kernels.kernel_terms(spec, 2, 6)
    grouped = _kernels.GroupedReference(group_codes, group_start, order, terms, cat_w)
    assert _nearby.first_pass(search, grouped) is None  # 4 x 3000 pairs: too few
    many = _nearby._MIN_QUERIES_PER_GROUP * group_codes.shape[0]
    # enough pairs, too few query rows for the groups: the index would not pay
    few = _nearby.first_pass(
        search, grouped, n_pairs=_nearby._MIN_PAIRS, n_query=many - 1
    )
    assert few is None
    first = _nearby.first_pass(
        search, grouped, n_pairs=_nearby._MIN_PAIRS, n_query=many
    )
    assert first is not None
    assert "wild_index" in grouped.memo  # built once, kept for the search itself
    got = numba_backend._scan(search, grouped, n_pairs=_nearby._MIN_PAIRS, n_query=many)
    _assert_same(got, numpy_backend.kneighbors(search))


def test_first_pass_is_left_out_where_a_sample_of_queries_is_rarely_settled() -> None:
    # rows near the reference's groups are settled by the pass; rows far from every
    # group (codes no reference row has in three columns) are not: after a sample of
    # _PILOT_QUERIES of them the pass is left out. Both searches equal numpy's.
    from synthrisk.neighbors import _kernels, numba_backend

    rng = np.random.default_rng(9)
    reference = _table(rng, 3000, 2, 6, cardinality=6, nan=0.0, coarse=False)
    near = reference.take(rng.integers(0, 3000, 4 * _nearby._PILOT_QUERIES))
    far_codes = near.codes.copy()
    far_codes[:, :3] = 9
    far = dataclasses.replace(near, codes=far_codes)
    spec = distance_spec("dcr", reference.numeric, reference.numeric, 6)[0]
    group_codes, group_start, order = numba_backend.group_reference(reference.codes)
    terms, cat_w = _kernels.kernel_terms(spec, 2, 6)
    grouped = _kernels.GroupedReference(group_codes, group_start, order, terms, cat_w)
    for query, passed in ((near, True), (far, False)):
        search = Search(
            query.numeric, query.codes, reference.numeric, reference.codes, spec, 2
        )
        first = _nearby.first_pass(search, grouped, n_pairs=10**9, n_query=10**9)
        assert (first is not None) is passed
        got = numba_backend._scan(search, grouped, n_pairs=10**9, n_query=10**9)
        _assert_same(got, numpy_backend.kneighbors(search))


@pytest.mark.parametrize(
    ("low", "high", "n_cat"), [(-1, 3, 3), (-1, 50, 6), (0, 2**20, 4), (-5, 5, 0)]
)
def test_row_groups_match_numpy_unique(low: int, high: int, n_cat: int) -> None:
    # (0, 2**20, 4): 80 bits of codes, beyond one integer key
    rng = np.random.default_rng(high)
    codes = rng.integers(low, high, (500, n_cat))
    codes[100:200] = codes[:100]
    group_codes, inverse = row_groups(codes)
    if n_cat == 0:
        assert group_codes.shape == (1, 0)
        np.testing.assert_array_equal(inverse, np.zeros(500))
        return
    want_codes, want_inverse = np.unique(codes, axis=0, return_inverse=True)
    np.testing.assert_array_equal(group_codes, want_codes)
    np.testing.assert_array_equal(inverse, want_inverse.reshape(-1))
    # with the rows in group order, from the same sort where the codes take a key
    group_codes, inverse, order = grouped_rows(codes)
    np.testing.assert_array_equal(group_codes, want_codes)
    np.testing.assert_array_equal(inverse, want_inverse.reshape(-1))
    np.testing.assert_array_equal(order, np.argsort(inverse, kind="stable"))


@pytest.mark.parametrize("top", [1, 2**20, 2**45, 2**62])
def test_stable_key_order_is_a_stable_argsort(top: int) -> None:
    # 2**45 and 2**62 leave no room for the row position: numpy's stable sort
    from synthrisk.neighbors._kernels import stable_key_order

    rng = np.random.default_rng(top % 1000)
    key = rng.integers(0, top, 5000)
    key[::7] = key[0]  # many equal keys keep their order
    by_key, ordered = stable_key_order(key)
    np.testing.assert_array_equal(by_key, np.argsort(key, kind="stable"))
    np.testing.assert_array_equal(ordered, np.sort(key))


@pytest.fixture(params=["one and two mismatches", "one mismatch"])
def eager_first_pass(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> str:
    """Run the first pass of the grouped scan on every search (never the walk)."""
    monkeypatch.setattr(_nearby, "_MIN_GROUPS", 0)
    monkeypatch.setattr(_nearby, "_MIN_PAIRS", 0)
    monkeypatch.setattr(_nearby, "_MIN_QUERIES_PER_GROUP", 0)
    monkeypatch.setattr(_projection, "_MIN_PAIRS", 10**18)
    if request.param == "one mismatch":
        monkeypatch.setattr(_nearby, "_MAX_PAIR_ENTRIES", 0)
    return str(request.param)


@pytest.mark.filterwarnings("ignore:All-NaN slice encountered:RuntimeWarning")
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(params=searches(), extra_codes=st.booleans())
def test_first_pass_matches_numpy(
    params: dict[str, Any], extra_codes: bool, eager_first_pass: str
) -> None:
    query, reference, kw = _draw_tables(params)
    if extra_codes and params["n_cat"]:
        # query codes that no reference row has (and missing, -1, everywhere)
        codes = query.codes.copy()
        codes[::3, 0] = params["cardinality"] + 2
        query = dataclasses.replace(query, codes=codes)
    want = nearest_neighbors(query, reference, backend="numpy", **kw)
    got = nearest_neighbors(query, reference, backend="numba", **kw)
    np.testing.assert_array_equal(got.distances, want.distances)
    np.testing.assert_array_equal(got.indices, want.indices)


@pytest.mark.parametrize("weights", [None, "light", "zero"])
def test_first_pass_on_many_groups(weights: str | None, eager_first_pass: str) -> None:
    # 6 categorical columns of 4 codes: hundreds of groups, neighbours one or two
    # mismatches away; zero weights make mismatches free (the pass declines)
    rng = np.random.default_rng(11)
    query = _table(rng, 400, 2, 6, cardinality=4, nan=0.05, coarse=True)
    reference = _table(rng, 1500, 2, 6, cardinality=4, nan=0.05, coarse=True)
    kw: dict[str, Any] = {"distance": "dcr"}
    if weights == "light":
        kw["weights"] = np.r_[1.0, 1.0, 0.3, 0.7, 0.3, 1.1, 0.2, 0.9]
    elif weights == "zero":
        kw["weights"] = np.r_[1.0, 1.0, 0.0, 0.7, 0.3, 1.1, 0.0, 0.9]
    for k, radius in ((1, None), (8, None), (3, rng.random(400) * 0.4)):
        want = nearest_neighbors(
            query, reference, backend="numpy", k=k, max_distance=radius, **kw
        )
        got = nearest_neighbors(
            query, reference, backend="numba", k=k, max_distance=radius, **kw
        )
        np.testing.assert_array_equal(got.distances, want.distances)
        np.testing.assert_array_equal(got.indices, want.indices)


def test_least_sum_bounds_every_column_order() -> None:
    # the kernels sum in column order; the bound must hold for every order
    rng = np.random.default_rng(2)
    for _ in range(200):
        weights = rng.choice([0.1, 0.2, 0.3, 0.7, 1 / 3, 1e-17, 1.0], size=5)
        for count in (1, 2, 3):
            least = _nearby._least_sum(weights, count)
            for cols in itertools.combinations(range(5), count):
                acc = 0.0
                for c in cols:
                    acc += float(weights[c])
                assert least <= acc
    assert _nearby._least_sum(np.ones(2), 3) == np.inf
