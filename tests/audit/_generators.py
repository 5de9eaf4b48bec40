# SPDX-License-Identifier: BSD-3-Clause
"""Generators whose answer is known, for the audit's tests (module level: picklable)."""

from __future__ import annotations

import math

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
    """Fails on the runs whose seed is odd (first attempt only when ``once``)."""

    def __init__(self, *, once: bool) -> None:
        self.once = once
        self.calls: dict[int, int] = {}

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        self.calls[seed] = self.calls.get(seed, 0) + 1
        if seed % 2 and (not self.once or self.calls[seed] == 1):
            msg = f"crash on seed {seed}"
            raise RuntimeError(msg)
        return train.sample(n, replace=True, random_state=seed)
