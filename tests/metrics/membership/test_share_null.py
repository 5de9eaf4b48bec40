# SPDX-License-Identifier: BSD-3-Clause
"""The batched, multi-core permutation null of the DCR share gives the numbers of the
one-thread kernel it replaced, draw for draw."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthrisk.metrics.membership import _share_kernels
from synthrisk.metrics.membership._share_kernels import permutation_shares


@numba.njit
def _sequential_null(
    seed: int,
    tie_offsets: np.ndarray,
    tie_local: np.ndarray,
    weights: np.ndarray,
    n_unique: int,
    n_real: int,
    n_pool: int,
    n_permutations: int,
) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """The previous kernel, verbatim: one relabelling after another, sets in order."""
    np.random.seed(seed)  # noqa: NPY002 - numba's generator, as the old kernel seeded it
    n = tie_offsets.size - 1
    total = 0.0
    for s in range(n):
        total += weights[s]
    half = np.empty(n_permutations)
    weighted = np.empty(n_permutations)
    labels = np.empty(n_unique, dtype=np.bool_)
    for b in range(n_permutations):
        left_real = n_real
        left = n_pool
        for u in range(n_unique):
            is_real = np.random.random() * left < left_real  # noqa: NPY002
            labels[u] = is_real
            if is_real:
                left_real -= 1
            left -= 1
        closer = 0.0
        ties = 0.0
        for s in range(n):
            any_real = False
            any_holdout = False
            for e in range(tie_offsets[s], tie_offsets[s + 1]):
                if labels[tie_local[e]]:
                    any_real = True
                else:
                    any_holdout = True
                if any_real and any_holdout:
                    break
            if any_real and any_holdout:
                ties += weights[s]
            elif any_real:
                closer += weights[s]
        half[b] = (closer + 0.5 * ties) / total
        weighted[b] = (closer + (n_real / n_pool) * ties) / total
    return half, weighted


def _oracle(
    tie_offsets: np.ndarray,
    tie_indices: np.ndarray,
    weights: np.ndarray,
    *,
    n_real: int,
    n_pool: int,
    n_permutations: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    unique, local = np.unique(tie_indices, return_inverse=True)
    return _sequential_null(
        seed,
        tie_offsets,
        local.reshape(-1).astype(np.int64),
        weights,
        unique.size,
        n_real,
        n_pool,
        n_permutations,
    )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 2),
    n_sets=st.integers(1, 60),
    n_pool=st.integers(2, 80),
    max_size=st.integers(1, 6),
    weights=st.sampled_from(["none", "counts", "fractions"]),
    n_permutations=st.integers(1, 200),
    batch_draws=st.sampled_from([1, 7, 3000, 10**6]),
)
def test_null_matches_the_sequential_kernel(
    seed: int,
    n_sets: int,
    n_pool: int,
    max_size: int,
    weights: str,
    n_permutations: int,
    batch_draws: int,
) -> None:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size + 1, n_sets)
    tie_offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    tie_indices = np.concatenate(
        [np.sort(rng.choice(n_pool, min(s, n_pool), replace=False)) for s in sizes]
    )
    tie_offsets = np.r_[0, np.cumsum([min(s, n_pool) for s in sizes])].astype(np.int64)
    n_real = int(rng.integers(1, n_pool))
    w = {
        "none": np.ones(n_sets),
        "counts": rng.integers(1, 9, n_sets).astype(np.float64),
        "fractions": rng.random(n_sets) + 0.1,
    }[weights]
    want = _oracle(
        tie_offsets,
        tie_indices,
        w,
        n_real=n_real,
        n_pool=n_pool,
        n_permutations=n_permutations,
        seed=seed,
    )
    mp = pytest.MonkeyPatch()
    # few draws per batch: many batches (of 64 relabellings at least), the generator's
    # state carried over
    mp.setattr(_share_kernels, "_MAX_DRAWS", batch_draws)
    try:
        got = permutation_shares(
            tie_offsets,
            tie_indices,
            n_real=n_real,
            n_pool=n_pool,
            n_permutations=n_permutations,
            seed=seed,
            weights=None if weights == "none" else w,
        )
    finally:
        mp.undo()
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("seed", [0, 1, 2**31 - 2])
def test_generator_continues_the_mersenne_twister_stream(seed: int) -> None:
    # draws in pieces of odd sizes, across many twists of the state
    state = (
        _share_kernels._mt_seed(seed),
        np.empty(_share_kernels._MT_N // 2),
        np.array([_share_kernels._MT_N // 2]),
    )
    pieces = [np.empty(size) for size in (1, 311, 312, 5, 1000, 3, 20000)]
    for piece in pieces:
        _share_kernels._mt_fill(*state, piece)
    legacy = np.random.RandomState(seed)  # the stream to reproduce
    want = legacy.random_sample(sum(piece.size for piece in pieces))
    np.testing.assert_array_equal(np.concatenate(pieces), want)


def test_null_of_a_large_pool_keeps_one_bit_per_draw() -> None:
    # 64 relabellings of 200,000 pool rows: the draws (100 MiB as doubles) are kept
    # as label bits, so the null takes a few MiB whatever the pool
    import tracemalloc

    n_sets, n_pool = 200_000, 400_000
    rng = np.random.default_rng(0)
    tie_offsets = np.arange(n_sets + 1, dtype=np.int64)
    tie_indices = rng.permutation(n_pool)[:n_sets].astype(np.int64)
    permutation_shares(  # compiled before measuring
        tie_offsets[:3],
        tie_indices[:2],
        n_real=1,
        n_pool=n_pool,
        n_permutations=1,
        seed=0,
    )
    tracemalloc.start()
    try:
        half, _ = permutation_shares(
            tie_offsets,
            tie_indices,
            n_real=n_pool // 2,
            n_pool=n_pool,
            n_permutations=64,
            seed=3,
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20
    assert half.shape == (64,)
