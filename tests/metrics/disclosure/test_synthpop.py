# SPDX-License-Identifier: BSD-3-Clause
"""synthpop's disclosure measures: a hand-computed case, a dense oracle, properties."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from synthrisk import DiSCO, ReplicatedUniques, evaluate
from synthrisk.exceptions import ParameterError

REAL = pd.DataFrame({"k": list("AABBCD"), "t": list("xxyzxy")})
SYN = pd.DataFrame({"k": list("AABCE"), "t": list("xxyyx")})


def test_hand_computed_case() -> None:
    # computed by hand from synthpop's definitions (disclosure.synds)
    result = DiSCO(keys=["k"], target="t").compute(REAL, SYN)
    sp = result.breakdown["synthpop"]
    assert sp["ident"] == pytest.approx(
        {"UiO": 200 / 6, "UiS": 60.0, "UiOiS": 100 / 6, "repU": 100 / 6}, abs=1e-12
    )
    assert sp["attrib"] == pytest.approx(
        {"Dorig": 400 / 6, "Dsyn": 100.0, "iS": 500 / 6, "DiS": 500 / 6, "DiSCO": 50.0,
         "DCAPd": 50.0, "DiSDiO": 200 / 6, "max_denom": 2.0, "mean_denom": 1.5},
        abs=1e-12,
    )  # fmt: skip
    assert sp["allCAPs"] == pytest.approx(
        {"baseCAPd": 1400 / 36, "CAPd": 500 / 6, "CAPs": 100.0, "DCAPb": 75.0,
         "DCAPs": 60.0, "TCAPb": 75.0, "TCAPs": 60.0, "TCAP": 60.0},
        abs=1e-12,
    )  # fmt: skip
    assert result.score == 0.5
    assert result.breakdown["dio"] == pytest.approx(4 / 6)
    disclosed = result.records["disclosed"].values
    assert disclosed.tolist() == [1, 1, 1, 0, 0, 0]
    rep = ReplicatedUniques(keys=["k"]).compute(REAL, SYN)
    assert rep.score == pytest.approx(1 / 6)
    assert rep.records["replicated_unique"].values.tolist() == [0, 0, 0, 0, 1, 0]


def _oracle(
    orig: pd.DataFrame,
    syn: pd.DataFrame,
    keys: list[str],
    target: str,
    *,
    not_targetlev: list[str] = (),  # type: ignore[assignment]
    usetargetna: bool = True,
    usekeysna: tuple[bool, ...] | None = None,
    denom_lim: int | None = None,
) -> dict[str, float]:
    """A literal dense transcription of synthpop 1.9's disclosure.synds (one synthesis)."""

    def prep(frame: pd.DataFrame) -> pd.DataFrame:
        out = pd.DataFrame()
        out["target"] = (
            frame[target]
            .astype(object)
            .where(frame[target].notna(), "Missing")
            .astype(str)
        )
        for k in keys:
            out[k] = (
                frame[k].astype(object).where(frame[k].notna(), "Missing").astype(str)
            )
        out["keys"] = out[keys].agg(" | ".join, axis=1)
        return out

    dd, ss = prep(orig), prep(syn)
    nd, ns = len(dd), len(ss)
    kall = sorted(set(dd["keys"]) | set(ss["keys"]))
    tall = sorted(set(dd["target"]) | set(ss["target"]))
    ktd = (
        pd.crosstab(dd["target"], dd["keys"])
        .reindex(index=tall, columns=kall, fill_value=0)
        .to_numpy(float)
    )
    kts = (
        pd.crosstab(ss["target"], ss["keys"])
        .reindex(index=tall, columns=kall, fill_value=0)
        .to_numpy(float)
    )
    ks_names = set(ss["keys"])

    def props(tab: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            p = tab / tab.sum(axis=0)
        return np.nan_to_num(p)

    pd_, ps_ = props(ktd), props(kts)
    td = ktd.sum(axis=1)
    did = np.where(pd_ != 1, 0, ktd)
    dis = np.where(ps_ != 1, 0, kts)
    keys_syn = kts.sum(axis=0)
    t_is = ktd.copy()
    t_is[:, keys_syn == 0] = 0
    t_dis = ktd.copy()
    t_dis[:, ~(ps_ == 1).any(axis=0)] = 0
    t_disco = t_is.copy()
    t_disco[ps_ < 1] = 0
    t_disdio = t_disco.copy()
    t_disdio[pd_ < 1] = 0

    def exclude(x: np.ndarray) -> np.ndarray:
        x = x.copy()
        for i, lev in enumerate(tall):
            if lev in not_targetlev:
                x[i, :] = 0
        if not usetargetna and (dd["target"] == "Missing").any():
            x[[i for i, lev in enumerate(tall) if lev == "Missing"], :] = 0
        for j in range(len(keys)):
            if usekeysna is not None and not usekeysna[j]:
                drop = [
                    c
                    for c, name in enumerate(kall)
                    if name.split(" | ")[j] == "Missing"
                ]
                x[:, drop] = 0
        if denom_lim is not None:
            x[x > denom_lim] = 0
        return x

    ktd, kts, did, dis = exclude(ktd), exclude(kts), exclude(did), exclude(dis)
    t_is, t_dis, t_disco, t_disdio = (
        exclude(t_is),
        exclude(t_dis),
        exclude(t_disco),
        exclude(t_disdio),
    )
    tks, tkd = kts.sum(axis=0), ktd.sum(axis=0)
    in_s = np.array([k in ks_names for k in kall])
    out = {
        "UiO": np.sum(tkd == 1) / nd * 100, "UiS": np.sum(tks == 1) / ns * 100,
        "UiOiS": np.sum((tkd == 1) & in_s) / nd * 100, "repU": np.sum((tkd == 1) & (tks == 1)) / nd * 100,
        "Dorig": did.sum() / nd * 100, "Dsyn": dis.sum() / ns * 100, "iS": t_is.sum() / nd * 100,
        "DiS": t_dis.sum() / nd * 100, "DiSCO": t_disco.sum() / nd * 100, "DiSDiO": t_disdio.sum() / nd * 100,
        "max_denom": t_disco.max(),
    }  # fmt: skip
    pd2, ps2 = props(ktd), props(kts)
    nsboth = tks[tkd > 0].sum()
    dnum = (ps2 * ktd).sum()
    pu = np.where(ps2 != 1, 0, ps2)
    tnum = (pu * ktd).sum()
    denom_tcap = (tkd * pu.sum(axis=0)).sum()
    out.update(
        baseCAPd=((td / nd) ** 2).sum() * 100, CAPd=((pd2**2).sum(axis=0) * tkd).sum() / nd * 100,
        CAPs=((ps2**2).sum(axis=0) * tks).sum() / ns * 100, DCAPd=dnum / nd * 100, DCAPs=dnum / ns * 100,
        DCAPb=dnum / nsboth * 100 if nsboth else math.nan, TCAPb=tnum / nsboth * 100 if nsboth else math.nan,
        TCAPs=tnum / ns * 100, TCAP=tnum / denom_tcap * 100 if denom_tcap else math.nan,
    )  # fmt: skip
    return out


def _random_tables(seed: int, n: int = 120) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)

    def table(size: int) -> pd.DataFrame:
        frame = pd.DataFrame(
            {
                "a": rng.choice(["p", "q", "r", None], size, p=[0.4, 0.3, 0.2, 0.1]),
                "b": rng.integers(0, 4, size).astype(float),
                "t": rng.choice(["u", "v", "w", None], size, p=[0.5, 0.3, 0.15, 0.05]),
            }
        )
        frame.loc[rng.random(size) < 0.05, "b"] = np.nan
        return frame

    return table(n), table(int(n * 0.8))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"not_target_levels": ["w"]},
        {"use_missing_target": False, "use_missing_keys": [True, False]},
        {"exclude_over_denom_lim": True, "denom_lim": 2},
    ],
)
def test_matches_dense_transcription_of_synthpop(seed: int, options: dict) -> None:
    real, syn = _random_tables(seed)
    result = DiSCO(keys=["a", "b"], target="t", **options).compute(real, syn)
    sp = result.breakdown["synthpop"]
    got = {**sp["ident"], **sp["attrib"], **sp["allCAPs"]}
    numeric_b = real.assign(b=real["b"].map(lambda v: v if v != v else str(v)))
    numeric_s = syn.assign(b=syn["b"].map(lambda v: v if v != v else str(v)))
    usekeys = options.get("use_missing_keys")
    expected = _oracle(
        numeric_b, numeric_s, ["a", "b"], "t",
        not_targetlev=options.get("not_target_levels", []),
        usetargetna=options.get("use_missing_target", True),
        usekeysna=None if usekeys is None else tuple(usekeys),
        denom_lim=options.get("denom_lim") if options.get("exclude_over_denom_lim") else None,
    )  # fmt: skip
    for name, value in expected.items():
        if math.isnan(value):
            assert got[name] is None, name
        else:
            assert got[name] == pytest.approx(value, abs=1e-9), name
    assert result.score == pytest.approx(expected["DiSCO"] / 100, abs=1e-12)
    assert result.records["disclosed"].values.sum() == pytest.approx(
        expected["DiSCO"] / 100 * len(real)
    )


def test_copy_discloses_like_the_original_and_null_has_no_excess() -> None:
    rng = np.random.default_rng(3)
    n = 3000
    population = pd.DataFrame(
        {
            "age": rng.integers(20, 70, 3 * n),
            "sex": rng.choice(["f", "m"], 3 * n),
            "region": rng.integers(0, 12, 3 * n),
            "income": rng.choice(["low", "mid", "high"], 3 * n, p=[0.5, 0.3, 0.2]),
        }
    )
    real, hold, fresh = (
        population.iloc[:n],
        population.iloc[n : 2 * n],
        population.iloc[2 * n :],
    )
    keys = ["age", "sex", "region"]
    copy = DiSCO(keys=keys, target="income").compute(
        real, real.reset_index(drop=True), hold
    )
    assert copy.score == pytest.approx(copy.breakdown["dio"])
    assert copy.breakdown["control"]["effect"] > 0.05
    assert copy.breakdown["control"]["p_value"] < 1e-6
    null = DiSCO(keys=keys, target="income").compute(real, fresh, hold)
    control = null.breakdown["control"]
    assert abs(control["effect"]) < 0.03
    assert control["ci"][0] < 0 < control["ci"][1]
    assert control["p_value"] > 0.01
    rep_copy = ReplicatedUniques(keys=keys).compute(real, real, hold)
    assert rep_copy.score == pytest.approx(
        rep_copy.breakdown["synthpop"]["ident"]["UiO"] / 100
    )
    assert rep_copy.breakdown["control"]["p_value"] < 1e-6
    rep_null = ReplicatedUniques(keys=keys).compute(real, fresh, hold)
    assert rep_null.breakdown["control"]["p_value"] > 0.01


def test_equal_size_control_when_holdout_is_smaller() -> None:
    rng = np.random.default_rng(5)
    population = pd.DataFrame(
        {"a": rng.integers(0, 300, 5000), "b": rng.choice(list("xyz"), 5000)}
    )
    real, hold, fresh = (
        population.iloc[:3000],
        population.iloc[3000:4000],
        population.iloc[4000:],
    )
    result = ReplicatedUniques(keys=["a", "b"], n_repeats=5).compute(real, fresh, hold)
    control = result.breakdown["control"]
    assert control["n_real"] == control["n_holdout"] == 1000
    # uniqueness depends on the table size: at equal sizes the shares agree
    assert abs(control["effect"]) < 0.03


def test_parameters_are_checked() -> None:
    with pytest.raises(ParameterError, match="`keys` must name at least one column"):
        DiSCO(keys=[], target="t")
    with pytest.raises(ParameterError, match="`target` must name one column"):
        DiSCO(keys=["k"], target="")
    with pytest.raises(ParameterError, match="use_missing_keys"):
        DiSCO(use_missing_keys=[True, 1])
    with pytest.raises(ParameterError, match="use_missing_keys"):
        DiSCO(keys=["k"], target="t", use_missing_keys=[True, False])
    with pytest.raises(ParameterError, match="also one of the `keys`"):
        DiSCO(keys=["k", "t"], target="t").compute(REAL, SYN)
    with pytest.raises(ParameterError, match="not in the tables"):
        ReplicatedUniques(keys=["nope"]).compute(REAL, SYN)


def test_through_evaluate_with_json() -> None:
    # another holdout than the training rows (a holdout equal to them is refused)
    holdout = pd.DataFrame({"k": list("AABCDD"), "t": list("xyyzxy")})
    report = evaluate(
        REAL,
        SYN,
        holdout,
        metrics={
            "disco": {"keys": ["k"], "target": "t"},
            "replicated_uniques": {"keys": ["k"]},
        },
    )
    data = report.to_dict()
    ids = [r["metric"] for r in data["results"]]
    assert ids == ["disco", "replicated_uniques"]
    direct = DiSCO(keys=["k"], target="t").compute(REAL, SYN, holdout)
    effect = data["results"][0]["breakdown"]["control"]["effect"]
    assert effect == direct.breakdown["control"]["effect"]
