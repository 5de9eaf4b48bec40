# SPDX-License-Identifier: BSD-3-Clause
"""Random generators: seeded reproducibly, and one independent stream per metric."""

from __future__ import annotations

import numpy as np
import pytest

from synthrisk._rng import as_generator, metric_generator
from synthrisk.exceptions import ParameterError


def _draws(generator: np.random.Generator) -> np.ndarray:
    return generator.integers(0, 2**62, size=8)


def test_as_generator_int_seed_is_reproducible() -> None:
    first = _draws(as_generator(42))
    np.testing.assert_array_equal(first, _draws(as_generator(42)))
    np.testing.assert_array_equal(first, _draws(np.random.default_rng(42)))


def test_as_generator_different_seeds_differ() -> None:
    assert not np.array_equal(_draws(as_generator(1)), _draws(as_generator(2)))


def test_as_generator_generator_passed_through() -> None:
    generator = np.random.default_rng(7)
    assert as_generator(generator) is generator
    expected = _draws(np.random.default_rng(7))
    np.testing.assert_array_equal(_draws(as_generator(generator)), expected)


def test_as_generator_none_gives_fresh_generators() -> None:
    first, second = as_generator(None), as_generator(None)
    assert isinstance(first, np.random.Generator)
    assert first is not second
    assert not np.array_equal(_draws(first), _draws(second))


def test_metric_generator_same_seed_and_id_same_stream() -> None:
    first = _draws(metric_generator(2024, "singling_out"))
    np.testing.assert_array_equal(first, _draws(metric_generator(2024, "singling_out")))


def test_metric_generator_returns_a_new_generator_each_call() -> None:
    first = metric_generator(3, "dcr")
    second = metric_generator(3, "dcr")
    assert first is not second
    first.random(100)  # drawing from one leaves the other at its start
    np.testing.assert_array_equal(_draws(second), _draws(metric_generator(3, "dcr")))


def test_metric_generator_different_ids_differ() -> None:
    streams = [
        _draws(metric_generator(0, metric_id))
        for metric_id in ("dcr", "nndr", "linkability", "dcr_", "rcd", "")
    ]
    for i, stream in enumerate(streams):
        for other in streams[i + 1 :]:
            assert not np.array_equal(stream, other)


def test_metric_generator_different_seeds_differ() -> None:
    assert not np.array_equal(
        _draws(metric_generator(0, "dcr")), _draws(metric_generator(1, "dcr"))
    )


def test_metric_generator_differs_from_the_plain_seed_stream() -> None:
    assert not np.array_equal(
        _draws(metric_generator(11, "dcr")), _draws(as_generator(11))
    )


def test_metric_generator_independent_of_call_order() -> None:
    forward = {mid: metric_generator(5, mid) for mid in ("a", "b", "c")}
    forward_draws = {mid: _draws(gen) for mid, gen in forward.items()}
    backward = {mid: metric_generator(5, mid) for mid in ("c", "b", "a")}
    # draw in another order too: one metric's draws never move another's stream
    backward_draws = {mid: _draws(backward[mid]) for mid in ("b", "c", "a")}
    for mid in ("a", "b", "c"):
        np.testing.assert_array_equal(forward_draws[mid], backward_draws[mid])


def test_metric_generator_unaffected_by_other_metrics_added() -> None:
    alone = _draws(metric_generator(9, "attribute_inference"))
    for extra in ("dcr", "nndr", "singling_out"):
        _draws(metric_generator(9, extra))
    np.testing.assert_array_equal(
        alone, _draws(metric_generator(9, "attribute_inference"))
    )


def test_metric_generator_keeps_every_bit_of_a_large_seed() -> None:
    a = metric_generator(0, "dcr_share").random(4)
    b = metric_generator(2**32, "dcr_share").random(4)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("seed", [-1, 1.5, True, "3"])
def test_metric_generator_refuses_a_bad_seed(seed: object) -> None:
    with pytest.raises(ParameterError, match="`seed` must be an integer >= 0"):
        metric_generator(seed, "dcr_share")  # type: ignore[arg-type]
