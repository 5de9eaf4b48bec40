# SPDX-License-Identifier: BSD-3-Clause
"""The inference attack's outcome: which guesses are correct, rates, and the holdout test.

:func:`inference_success` judges guesses of a secret (exactly, or within a relative
``closeness``); :class:`InferenceAttack` holds the guesses and their correctness of the
main, baseline and control attacks; :func:`secret_test` is the holdout test of one
secret, shared by a named secret and the every-column run.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk.stats.holdout import mean_difference_test
from synthrisk.stats.intervals import AttackEstimate, estimate_attack

__all__ = ["InferenceAttack", "inference_success", "secret_test"]


def inference_success(
    guesses: FloatArray,
    secrets: FloatArray,
    *,
    regression: bool,
    closeness: float = 0.05,
    rule: str = "fixed",
    scale: float | None = None,
) -> np.ndarray:
    """Which guesses of a secret are correct (a missing guess of a missing secret is).

    Parameters
    ----------
    guesses, secrets : ndarray of shape (n,)
        Encoded values (numbers, or category codes as floats), NaN for missing.
    regression : bool
        Numeric secret guessed within ``closeness`` (True) or exactly (False).
    closeness : float, default=0.05
        How close a regression guess must be, relative (Anonymeter's ``tolerance``).
    rule : {"fixed", "anonymeter"}, default="fixed"
        ``"anonymeter"``: ``|g - s| / (g + 1e-12) <= closeness``, relative to the signed
        *guess* (every negative guess passes, a zero guess needs an exact match);
        ``"fixed"``: ``|g - s| <= closeness * |s|``, or ``closeness * scale`` when a
        ``scale`` (the column's range, used for datetimes) is given.
    scale : float, default=None
        Range of the secret column, for ``rule="fixed"`` on columns without a natural zero.

    Examples
    --------
    >>> import numpy as np
    >>> g, s = np.array([-5.0, 1.0]), np.array([3.0, 1.04])
    >>> inference_success(g, s, regression=True, rule="anonymeter").tolist()
    [True, True]
    >>> inference_success(g, s, regression=True).tolist()
    [False, True]
    """
    both_missing = np.isnan(guesses) & np.isnan(secrets)
    with np.errstate(invalid="ignore", divide="ignore"):
        if not regression:
            match = guesses == secrets
        elif rule == "anonymeter":
            match = np.abs(guesses - secrets) / (guesses + 1e-12) <= closeness
        elif scale is not None:
            match = np.abs(guesses - secrets) <= closeness * scale
        else:
            match = np.abs(guesses - secrets) <= closeness * np.abs(secrets)
    return both_missing | match


@dataclasses.dataclass(frozen=True)
class InferenceAttack:
    """Guesses and their correctness for the main, baseline and control inference attacks.

    Attributes
    ----------
    secret : str
        The column guessed.
    aux_cols : tuple of str
        The columns the attacker knows.
    regression : bool
        Whether guesses are judged within ``closeness``.
    targets : ndarray of shape (n_main,)
        Attacked real rows.
    main_secrets, main_guesses : ndarray of shape (n_main,)
        Encoded true values and guesses (category codes as floats, NaN missing).
    main_success : ndarray of shape (n_main,) of bool
    baseline_success : ndarray of shape (n_baseline,) of bool
    control_targets : ndarray of shape (n_control,) or None
    control_secrets, control_guesses : ndarray of shape (n_control,) or None
    control_success : ndarray of shape (n_control,) of bool or None
    group_labels : dict of float to str
        Readable label of each encoded secret value (for the per-value breakdown).
    holdout_group_sizes : dict of float to int
        Holdout rows per encoded secret value (Anonymeter 1.1's per-group denominator);
        on partitioned tables, for the values of ``group_labels`` only.
    compat : str or None
    warnings : tuple of str
    """

    secret: str
    aux_cols: tuple[str, ...]
    regression: bool
    targets: IntArray
    main_secrets: FloatArray
    main_guesses: FloatArray
    main_success: np.ndarray
    baseline_success: np.ndarray
    control_targets: IntArray | None
    control_secrets: FloatArray | None
    control_guesses: FloatArray | None
    control_success: np.ndarray | None
    group_labels: dict[float, str]
    holdout_group_sizes: dict[float, int]
    compat: str | None
    warnings: tuple[str, ...]

    def estimate(self, *, confidence_level: float = 0.95) -> AttackEstimate:
        """Rates and risk at ``confidence_level``."""
        control = self.control_success
        return estimate_attack(
            n_success=int(self.main_success.sum()),
            n_attacks=int(self.main_success.size),
            n_baseline=int(self.baseline_success.sum()),
            n_baseline_attacks=int(self.baseline_success.size),
            n_control=None if control is None else int(control.sum()),
            n_control_attacks=None if control is None else int(control.size),
            confidence_level=confidence_level,
        )

    def groups(self, *, confidence_level: float = 0.95) -> dict[float, AttackEstimate]:
        """Rates and risk per value of the secret (Anonymeter 1.1's ``risk_for_groups``).

        Main and control successes are counted among the targets holding that value;
        the baseline is shared. Values no real target holds are left out. Without
        ``compat``, the control denominator is the number of attacked holdout rows
        with the value; with ``compat="anonymeter-1.1"`` it is every holdout row with
        the value, attacked or not (1.1's behaviour, which deflates the control rate).
        Keys are encoded secret values; ``group_labels`` gives their text.
        """
        out: dict[float, AttackEstimate] = {}
        for value in self.group_labels:
            in_main = self.main_secrets == value
            if not in_main.any():
                continue
            n_control = n_control_attacks = None
            if self.control_success is not None and self.control_secrets is not None:
                in_control = self.control_secrets == value
                if self.compat == "anonymeter-1.1":
                    n_control_attacks = self.holdout_group_sizes.get(value, 0)
                else:
                    n_control_attacks = int(in_control.sum())
                if n_control_attacks:
                    n_control = int(self.control_success[in_control].sum())
                else:
                    n_control_attacks = None
            out[value] = estimate_attack(
                n_success=int(self.main_success[in_main].sum()),
                n_attacks=int(in_main.sum()),
                n_baseline=int(self.baseline_success.sum()),
                n_baseline_attacks=int(self.baseline_success.size),
                n_control=n_control,
                n_control_attacks=n_control_attacks,
                confidence_level=confidence_level,
            )
        return out


def secret_test(
    result: InferenceAttack, *, confidence_level: float = 0.95
) -> dict[str, JSONValue] | None:
    """The holdout test of one secret: training people's success minus holdout people's.

    The share of attacked training people whose secret was guessed minus the same share
    for attacked holdout people (Welch's standard error of two independent means; the
    success does not depend on the two sizes). None without a holdout.
    """
    if result.control_success is None:
        return None
    return mean_difference_test(
        result.main_success,
        result.control_success,
        statistic=f"share of training people whose {result.secret!r} was guessed minus the same for holdout people",
        confidence_level=confidence_level,
    )
