# SPDX-License-Identifier: BSD-3-Clause
"""Generators whose answer is known, for the audit's tests (module level: picklable)."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd


def population(n: int, seed: int) -> pd.DataFrame:
    """A mixed-type population: two continuous columns and one categorical column."""
    g = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x": g.normal(size=n),
            "y": g.gamma(2.0, size=n),
            "c": g.choice(["a", "b", "c", "d"], size=n, p=[0.4, 0.3, 0.2, 0.1]),
        }
    )


class KnownEpsilon:
    """An ε-differentially private mechanism with respect to each target.

    Each target's record is put in the output with probability ``e^ε / (1 + e^ε)`` when
    the target is in the training set and ``1 / (1 + e^ε)`` when it is not; the other
    output rows are draws from the training rows that are not targets. For each target
    the only thing that depends on its membership is its own coin, whose two
    probabilities are in ratio ``e^ε``: the mechanism is exactly ε-DP for it, and the
    test "the record is in the output" reaches TPR / FPR = e^ε.
    """

    def __init__(self, targets: pd.DataFrame, epsilon: float) -> None:
        self.targets = targets.reset_index(drop=True)
        self.epsilon = epsilon

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        g = np.random.default_rng(seed)
        present = self.targets["x"].isin(train["x"]).to_numpy()
        p_in = math.exp(self.epsilon) / (1 + math.exp(self.epsilon))
        coin = g.random(len(self.targets))
        inserted = np.where(present, coin < p_in, coin < 1 - p_in)
        others = train[~train["x"].isin(self.targets["x"])]
        draws = others.iloc[
            g.integers(0, len(others), size=max(n - int(inserted.sum()), 1))
        ]
        out = pd.concat([draws, self.targets[inserted]], ignore_index=True)
        return out.iloc[g.permutation(len(out))].reset_index(drop=True)


class Copier:
    """Each output row copies a random training row with probability ``p``, else is a new person."""

    def __init__(self, p: float, *, seed: int = 99) -> None:
        self.p = p
        self.fresh = population(5000, seed)

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        g = np.random.default_rng(seed)
        copy = g.random(n) < self.p
        copies = train.iloc[g.integers(0, len(train), size=int(copy.sum()))]
        new = self.fresh.iloc[g.integers(0, len(self.fresh), size=n - int(copy.sum()))]
        return pd.concat([copies, new], ignore_index=True)


class Flaky:
    """Fails on the runs whose first seed is odd (on the first attempt only when ``once``).

    A run is told by its training table, so the retry (which gets a new seed) of a run
    that failed fails again when not ``once``. ``seeds`` records every seed per run.
    """

    def __init__(self, *, once: bool) -> None:
        self.once = once
        self.seeds: dict[int, list[int]] = {}

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        key = int(pd.util.hash_pandas_object(train, index=False).sum())
        seen = self.seeds.setdefault(key, [])
        seen.append(seed)
        if seen[0] % 2 and (not self.once or len(seen) == 1):
            msg = f"crash on seed {seed}"
            raise RuntimeError(msg)
        return train.sample(n, replace=True, random_state=seed)


class Sleeper:
    """Hangs (sleeps an hour) when handed one of the ``hang`` seeds; else samples the training rows.

    It keeps no state, so it behaves the same in a child process. ``calls`` counts the
    calls made in this process.
    """

    def __init__(self, hang: set[int]) -> None:
        self.hang = set(hang)
        self.calls = 0

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        self.calls += 1
        if seed in self.hang:
            time.sleep(3600)
        return train.sample(n, replace=True, random_state=seed)


class Counting:
    """Samples the training rows and counts its calls (for the run cache)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        self.calls += 1
        g = np.random.default_rng(seed)
        out = train.iloc[g.integers(0, len(train), size=n)].reset_index(drop=True)
        return out.assign(x=out["x"] + g.normal(scale=1e-3, size=n))
