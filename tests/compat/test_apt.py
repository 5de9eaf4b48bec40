# SPDX-License-Identifier: BSD-3-Clause
"""synthrisk.compat.apt: APT 0.2.1's numbers (goldens), its API, and the fixed behaviours."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse

from synthrisk.compat.apt import (
    ArrayDataset,
    DatasetAssessmentManager,
    DatasetAssessmentManagerConfig,
    DatasetAttackConfigMembershipClassification,
    DatasetAttackConfigMembershipKnnProbabilities,
    DatasetAttackConfigWholeDatasetKnnDistance,
    DatasetAttackMembership,
    DatasetAttackMembershipClassification,
    DatasetAttackMembershipKnnProbabilities,
    DatasetAttackWholeDatasetKnnDistance,
)
from synthrisk.exceptions import InputError, ParameterError

DATA = Path(__file__).parent / "data" / "apt"
GOLDENS = json.loads((DATA / "goldens.json").read_text(encoding="utf-8"))
CASES = sorted(GOLDENS["cases"])
TOL = 1e-9


def _arrays(case: str) -> dict[str, np.ndarray]:
    return {
        n: pd.read_csv(DATA / f"{case}_{n}.csv").to_numpy()
        for n in ("members", "non_members", "synthetic")
    }


def _datasets(case: str) -> tuple[ArrayDataset, ArrayDataset, ArrayDataset]:
    arrays = _arrays(case)
    return (
        ArrayDataset(arrays["members"]),
        ArrayDataset(arrays["non_members"]),
        ArrayDataset(arrays["synthetic"]),
    )


@pytest.fixture
def small() -> tuple[ArrayDataset, ArrayDataset, ArrayDataset]:
    rng = np.random.default_rng(7)
    members = rng.normal(size=(60, 4))
    non_members = rng.normal(size=(40, 4))
    synthetic = np.vstack([members[:20] + 0.01, rng.normal(size=(30, 4))])
    return ArrayDataset(members), ArrayDataset(non_members), ArrayDataset(synthetic)


# --------------------------------------------------------------------------- goldens


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("k", [5, 3])
def test_knn_probabilities_match_apt(case: str, k: int) -> None:
    golden = GOLDENS["cases"][case][f"knn_k{k}"]
    members, non_members, synthetic = _datasets(case)
    attack = DatasetAttackMembershipKnnProbabilities(
        members, non_members, synthetic, DatasetAttackConfigMembershipKnnProbabilities(k=k), "golden",
        GOLDENS["cases"][case]["categorical_features"],
    )  # fmt: skip
    score = attack.assess_privacy()
    assert score.roc_auc_score == pytest.approx(golden["roc_auc_score"], abs=TOL)
    assert score.risk_score == score.roc_auc_score
    assert score.average_precision_score == pytest.approx(
        golden["average_precision_score"], abs=TOL
    )
    np.testing.assert_allclose(
        score.result.member_probabilities,
        golden["member_probabilities"],
        rtol=0,
        atol=TOL,
    )
    np.testing.assert_allclose(
        score.result.non_member_probabilities,
        golden["non_member_probabilities"],
        rtol=0,
        atol=TOL,
    )


@pytest.mark.parametrize("case", CASES)
def test_whole_dataset_share_matches_apt(case: str) -> None:
    golden = GOLDENS["cases"][case]["share"]
    attack = DatasetAttackWholeDatasetKnnDistance(*_datasets(case))
    d_members, d_non_members = attack.calculate_distances()
    assert int(np.sum(d_members == d_non_members)) == golden["ties"]
    assert attack.assess_privacy().share == pytest.approx(golden["share"], abs=TOL)


def test_golden_cases_cover_ties_and_both_search_algorithms() -> None:
    mixed, gaussian = GOLDENS["cases"]["mixed"], GOLDENS["cases"]["gaussian"]
    assert mixed["share"]["ties"] > 0  # APT's tie weighting is exercised
    assert mixed["knn_k5"]["algorithm"] == "kd_tree"
    assert gaussian["knn_k5"]["algorithm"] == "brute"


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kind", ["LogisticRegression", "RandomForestClassifier"])
def test_classification_matches_apt(case: str, kind: str) -> None:
    pytest.importorskip("sklearn")
    golden = GOLDENS["cases"][case][f"classification_{kind}"]
    attack = DatasetAttackMembershipClassification(
        *_datasets(case),
        DatasetAttackConfigMembershipClassification(classifier_type=kind),
    )
    score = attack.assess_privacy()
    assert score.member_roc_auc_score == pytest.approx(
        golden["member_roc_auc_score"], abs=TOL
    )
    assert score.non_member_roc_auc_score == pytest.approx(
        golden["non_member_roc_auc_score"], abs=TOL
    )
    assert score.normalized_ratio == pytest.approx(golden["normalized_ratio"], abs=TOL)
    assert (
        score.synthetic_data_quality_warning is golden["synthetic_data_quality_warning"]
    )


@pytest.mark.parametrize("case", CASES)
def test_manager_csv_files_match_apt(case: str, tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    manager = DatasetAssessmentManager(
        DatasetAssessmentManagerConfig(persist_reports=True, output_dir=tmp_path)
    )
    scores = manager.assess(
        *_datasets(case),
        f"golden_{case}",
        GOLDENS["cases"][case]["categorical_features"],
    )
    assert list(scores) == [
        "MembershipKnnProbabilities",
        "WholeDatasetKnnDistance",
        "MembershipClassification",
    ]
    written = manager.dump_all_scores_to_files()
    golden_files = GOLDENS["cases"][case]["manager_csv"]
    assert sorted(p.name for p in written) == sorted(golden_files)
    for path in written:
        ours = pd.read_csv(path)
        theirs = pd.read_csv(io.StringIO(golden_files[path.name]))
        assert list(ours.columns) == list(theirs.columns)
        for column in ours.columns:
            if ours[column].dtype.kind == "f":
                np.testing.assert_allclose(
                    ours[column], theirs[column], rtol=0, atol=TOL
                )
            else:
                assert ours[column].tolist() == theirs[column].tolist()


# --------------------------------------------------------------------------- manager


def test_managers_do_not_share_scores(small: tuple[ArrayDataset, ...]) -> None:
    pytest.importorskip("sklearn")
    first, second = DatasetAssessmentManager(), DatasetAssessmentManager()
    first.assess(*small, "a")
    first.assess(*small, "b")
    assert [s.dataset_name for s in first.attack_scores["WholeDatasetKnnDistance"]] == [
        "a",
        "b",
    ]
    assert second.attack_scores == {}
    second.assess(*small, "c")
    assert len(first.attack_scores["MembershipKnnProbabilities"]) == 2
    assert len(second.attack_scores["MembershipKnnProbabilities"]) == 1


def test_manager_accepts_apt_default_config_class(
    small: tuple[ArrayDataset, ...], tmp_path: Path
) -> None:
    manager = DatasetAssessmentManager(DatasetAssessmentManagerConfig)
    assert manager.config.persist_reports is False
    assert manager.dump_all_scores_to_files(tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_dump_writes_timestamped_files_into_chosen_folder(
    small: tuple[ArrayDataset, ...], tmp_path: Path
) -> None:
    pytest.importorskip("sklearn")
    out = tmp_path / "reports" / "run1"
    config = DatasetAssessmentManagerConfig(
        persist_reports=True, timestamp_reports=True, output_dir=out
    )
    manager = DatasetAssessmentManager(config)
    manager.assess(*small, "d1")
    manager.assess(*small, "d2")
    written = manager.dump_all_scores_to_files()
    assert {p.parent for p in written} == {out}
    assert all(
        p.name[:15].replace("-", "").isdigit() and p.name[15] == "_" for p in written
    )
    share_csv = pd.read_csv(
        next(p for p in written if "WholeDatasetKnnDistance" in p.name)
    )
    assert list(share_csv.columns) == [
        "dataset_name",
        "risk_score",
        "share",
        "assessment_type",
    ]
    assert share_csv["dataset_name"].tolist() == ["d1", "d2"]
    other = tmp_path / "elsewhere"
    assert {p.parent for p in manager.dump_all_scores_to_files(other)} == {other}


def test_generate_plots_saves_roc_curve_in_output_folder(
    small: tuple[ArrayDataset, ...], tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    pytest.importorskip("sklearn")
    manager = DatasetAssessmentManager(
        DatasetAssessmentManagerConfig(generate_plots=True, output_dir=tmp_path)
    )
    manager.assess(*small, "plotted")
    png = tmp_path / "plotted_roc_curve.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_roc_curve_uses_prefix(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = DatasetAttackMembership.plot_roc_curve(
        "x", np.array([0.9, 0.8]), np.array([0.1]), "pre_", tmp_path
    )
    assert path == tmp_path / "pre_x_roc_curve.png"
    assert path.exists()


def test_calculate_metrics_returns_roc_points() -> None:
    fpr, tpr, thresholds, auc, ap = DatasetAttackMembership.calculate_metrics(
        np.array([0.9, 0.4]), np.array([0.5, 0.1])
    )
    np.testing.assert_allclose(fpr, [0, 0, 0.5, 0.5, 1])
    np.testing.assert_allclose(tpr, [0, 0.5, 0.5, 1, 1])
    assert thresholds[0] == np.inf
    assert auc == pytest.approx(0.75)
    assert ap == pytest.approx(0.5 * 1 + 0.5 * 2 / 3)


# --------------------------------------------------------------------------- ArrayDataset


def test_array_dataset_from_dataframe_keeps_names() -> None:
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    ds = ArrayDataset(frame, y=[0, 1])
    assert ds.is_pandas
    assert ds.features_names == ["a", "b"]
    np.testing.assert_array_equal(ds.get_samples(), [[1, 3], [2, 4]])
    np.testing.assert_array_equal(ds.get_labels(), [0, 1])
    assert ds.get_predictions() is None


def test_array_dataset_converts_lists_sparse_and_tensors() -> None:
    class FakeTensor:
        def __init__(self, a: np.ndarray) -> None:
            self.a = a

        def detach(self) -> FakeTensor:
            return self

        def cpu(self) -> FakeTensor:
            return self

        def numpy(self) -> np.ndarray:
            return self.a

    np.testing.assert_array_equal(
        ArrayDataset([[1, 2], [3, 4]]).get_samples(), [[1, 2], [3, 4]]
    )
    sparse = scipy.sparse.csr_matrix(np.eye(3))
    np.testing.assert_array_equal(ArrayDataset(sparse).get_samples(), np.eye(3))
    np.testing.assert_array_equal(
        ArrayDataset(FakeTensor(np.ones((2, 2)))).get_samples(), np.ones((2, 2))
    )


def test_array_dataset_rejects_bad_inputs() -> None:
    with pytest.raises(InputError, match="must have the same length; got 2 and 3"):
        ArrayDataset(np.zeros((2, 2)), y=[0, 1, 2])
    with pytest.raises(InputError, match="are not the DataFrame's columns"):
        ArrayDataset(pd.DataFrame({"a": [1.0]}), features_names=["b"])
    with pytest.raises(InputError, match="got dict"):
        ArrayDataset({"a": 1})


# --------------------------------------------------------------------------- bad input


def test_nan_in_compat_array_has_clear_message(small: tuple[ArrayDataset, ...]) -> None:
    members = small[0].get_samples().copy()
    members[3, 2] = np.nan
    attack = DatasetAttackMembershipKnnProbabilities(
        ArrayDataset(members), small[1], small[2]
    )
    with pytest.raises(
        InputError, match=r"missing \(NaN\) at row 3, column 2\); impute or drop them"
    ):
        attack.assess_privacy()


def test_infinite_values_are_rejected(small: tuple[ArrayDataset, ...]) -> None:
    synthetic = small[2].get_samples().copy()
    synthetic[0, 0] = np.inf
    with pytest.raises(InputError, match=r"infinite at row 0, column 0\)"):
        DatasetAttackWholeDatasetKnnDistance(
            small[0], small[1], ArrayDataset(synthetic)
        ).assess_privacy()


def test_non_numeric_array_has_clear_message(small: tuple[ArrayDataset, ...]) -> None:
    members = small[0].get_samples().astype(object)
    members[5, 1] = "high"
    attack = DatasetAttackWholeDatasetKnnDistance(
        ArrayDataset(members), small[1], small[2]
    )
    with pytest.raises(
        InputError,
        match=r"non-numeric values \(e.g. 'high' at row 5, column 1\); .* one-hot",
    ):
        attack.assess_privacy()


def test_numeric_object_arrays_are_accepted(small: tuple[ArrayDataset, ...]) -> None:
    members = small[0].get_samples().astype(object)
    got = DatasetAttackWholeDatasetKnnDistance(
        ArrayDataset(members), small[1], small[2]
    ).assess_privacy()
    want = DatasetAttackWholeDatasetKnnDistance(*small).assess_privacy()
    assert got.share == want.share


def test_fewer_synthetic_rows_than_k(small: tuple[ArrayDataset, ...]) -> None:
    synthetic = ArrayDataset(small[2].get_samples()[:3])
    attack = DatasetAttackMembershipKnnProbabilities(small[0], small[1], synthetic)
    with pytest.raises(InputError, match="has 3 row\\(s\\), fewer than k=5 neighbours"):
        attack.assess_privacy()


def test_mismatched_feature_counts(small: tuple[ArrayDataset, ...]) -> None:
    attack = DatasetAttackWholeDatasetKnnDistance(
        small[0], ArrayDataset(np.zeros((5, 3))), small[2]
    )
    with pytest.raises(InputError, match="same number of features; got 4, 3 and 4"):
        attack.assess_privacy()


def test_unsupported_distance_and_kwargs(small: tuple[ArrayDataset, ...]) -> None:
    config = DatasetAttackConfigMembershipKnnProbabilities(
        compute_distance=lambda a, b: 0.0
    )
    with pytest.raises(
        ParameterError, match="`compute_distance` must be None or 'euclidean'"
    ):
        DatasetAttackMembershipKnnProbabilities(*small, config)
    with pytest.raises(
        ParameterError, match=r"unexpected keyword argument\(s\) \['bogus'\]"
    ):
        DatasetAttackWholeDatasetKnnDistance(*small, bogus=1)
    with pytest.raises(
        ParameterError, match="`distribution_comparison_numeric_test` must be one of"
    ):
        DatasetAttackWholeDatasetKnnDistance(
            *small, distribution_comparison_numeric_test="XX"
        )
    with pytest.raises(ParameterError, match="`classifier_type` must be one of"):
        DatasetAttackMembershipClassification(
            *small, DatasetAttackConfigMembershipClassification("SVC")
        )
    with pytest.raises(ParameterError, match="`batch_size` must be > 0"):
        DatasetAttackWholeDatasetKnnDistance(
            *small,
            DatasetAttackConfigWholeDatasetKnnDistance(use_batches=True, batch_size=0),
        )


def _categorical_frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(3)

    def frame(n: int, p_first: float) -> pd.DataFrame:
        first = rng.random(n) < p_first
        return pd.DataFrame(
            {
                "x": rng.normal(size=n),
                "is_a": first.astype(float),
                "is_b": (~first).astype(float),
            }
        )

    return frame(300, 0.5), frame(300, 0.5), frame(300, 0.9)


def test_categorical_features_by_name_or_position_agree() -> None:
    members, non_members, synthetic = (ArrayDataset(f) for f in _categorical_frames())
    by_name = DatasetAttackWholeDatasetKnnDistance(
        members, non_members, synthetic, categorical_features=["is_a", "is_b"]
    )
    by_pos = DatasetAttackWholeDatasetKnnDistance(
        members, non_members, synthetic, categorical_features=[1, 2]
    )
    res_name = by_name.assess_privacy().distributions_validation_result
    res_pos = by_pos.assess_privacy().distributions_validation_result
    assert res_name == res_pos
    # a real chi-square flags the shifted category frequencies (APT's CHI never does)
    assert res_name.member_column_distribution_diff == [1, 2]
    assert res_name.distributions_valid is False


def test_categorical_feature_names_need_feature_names(
    small: tuple[ArrayDataset, ...],
) -> None:
    attack = DatasetAttackWholeDatasetKnnDistance(
        *small, categorical_features=["colour"]
    )
    with pytest.raises(
        ParameterError, match="the datasets have no feature names; give positions"
    ):
        attack.assess_privacy()
    members, non_members, synthetic = (ArrayDataset(f) for f in _categorical_frames())
    attack = DatasetAttackWholeDatasetKnnDistance(
        members, non_members, synthetic, categorical_features=["colour"]
    )
    with pytest.raises(
        ParameterError,
        match=r"not in the data: \['colour'\]\. Features: \['x', 'is_a', 'is_b'\]",
    ):
        attack.assess_privacy()
    attack = DatasetAttackWholeDatasetKnnDistance(
        members, non_members, synthetic, categorical_features=[7]
    )
    with pytest.raises(
        ParameterError, match="position 7 is out of range for 3 features"
    ):
        attack.assess_privacy()


def test_categorical_features_none_works(small: tuple[ArrayDataset, ...]) -> None:
    score = DatasetAttackMembershipKnnProbabilities(
        *small, categorical_features=None
    ).assess_privacy()
    assert score.distributions_validation_result is not None


def test_cvm_compares_with_the_original_data() -> None:
    rng = np.random.default_rng(0)
    members, non_members = rng.normal(size=(200, 2)), rng.normal(size=(200, 2))
    synthetic = rng.normal(size=(200, 2)) + np.array([3.0, 0.0])
    attack = DatasetAttackWholeDatasetKnnDistance(
        ArrayDataset(members), ArrayDataset(non_members), ArrayDataset(synthetic),
        distribution_comparison_numeric_test="CVM",
    )  # fmt: skip
    result = attack.assess_privacy().distributions_validation_result
    assert result.member_column_distribution_diff == [0]
    assert result.non_member_column_distribution_diff == [0]


def test_float32_arrays_are_validated() -> None:
    rng = np.random.default_rng(1)
    members = rng.normal(size=(200, 2)).astype(np.float32)
    synthetic = (rng.normal(size=(200, 2)) + 2.0).astype(np.float32)
    attack = DatasetAttackWholeDatasetKnnDistance(
        ArrayDataset(members), ArrayDataset(members), ArrayDataset(synthetic)
    )
    result = attack.assess_privacy().distributions_validation_result
    assert result.member_column_distribution_diff == [0, 1]


def test_failed_test_is_reported_as_not_validated() -> None:
    members = np.zeros((30, 1))
    synthetic = np.zeros((30, 1))
    attack = DatasetAttackWholeDatasetKnnDistance(
        ArrayDataset(members), ArrayDataset(members), ArrayDataset(synthetic),
        distribution_comparison_numeric_test="ES",
    )  # fmt: skip
    result = attack.assess_privacy().distributions_validation_result
    assert result.distributions_validated is False
    assert result.distributions_valid is False


def test_batching_keeps_every_row() -> None:
    rng = np.random.default_rng(2)
    members, non_members, synthetic = (
        rng.normal(size=(103, 3)),
        rng.normal(size=(57, 3)),
        rng.normal(size=(40, 3)),
    )
    config = DatasetAttackConfigMembershipKnnProbabilities(
        use_batches=True, batch_size=10
    )
    score = DatasetAttackMembershipKnnProbabilities(
        ArrayDataset(members),
        ArrayDataset(non_members),
        ArrayDataset(synthetic),
        config,
    ).assess_privacy()
    assert score.result.member_probabilities.shape == (103,)
    assert score.result.non_member_probabilities.shape == (57,)


@pytest.mark.parametrize("kind", ["continuous", "binary", "coarse"])
def test_ks_decision_from_sorted_columns_equals_scipy(kind: str) -> None:
    """The validation's KS decision (columns sorted once, Massart's bound far from
    alpha) is SciPy's ks_2samp p-value compared with alpha, on both sides of it."""
    from scipy import stats

    from synthrisk.compat import apt

    rng = np.random.default_rng(len(kind))
    outcomes = set()
    for (n1, n2), shift in zip(
        [(12_000, 15_000), (10_001, 4_000), (900, 700), (20_000, 11_000)] * 2,
        [0.0, 0.01, 0.03, 0.2, 0.02, 0.0, 0.05, 0.015],
        strict=True,
    ):
        if kind == "continuous":
            x, y = rng.normal(size=n1), rng.normal(shift, 1.0, size=n2)
        elif kind == "binary":
            x, y = (rng.random(n1) < 0.5) * 1.0, (rng.random(n2) < 0.5 + shift) * 1.0
        else:
            x, y = (
                rng.integers(0, 7, n1) / 3,
                (rng.integers(0, 7, n2) + shift * 9) // 1 / 3,
            )
        p = stats.ks_2samp(x, y).pvalue
        for alpha in (0.5, 0.05, 1e-3, 1e-12):
            got = apt._ks_differs(np.sort(x), np.sort(y), alpha)
            assert got == (p < alpha)
            outcomes.add(got)
    assert outcomes == {True, False}


def test_checks_overlapping_the_searches_give_the_sequential_result() -> None:
    """Above SciPy's exact KS size the distribution checks run beside the kNN searches."""
    from synthrisk.compat import apt

    rng = np.random.default_rng(7)
    n = apt._KS_EXACT_ROWS + 50
    members = rng.normal(size=(n, 3))
    non_members = rng.normal(size=(n, 3))
    synthetic = rng.normal(size=(n, 3))
    synthetic[:, 1] += 0.1  # this column differs
    score = DatasetAttackWholeDatasetKnnDistance(
        ArrayDataset(members), ArrayDataset(non_members), ArrayDataset(synthetic)
    ).assess_privacy()
    sequential = apt._Validator().validate(members, non_members, synthetic, [])
    assert score.distributions_validation_result == sequential
    assert sequential.member_column_distribution_diff == [1]
