"""identifier_replay and text_replay: hand-computed counts, exact p-values, planted copies."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _fixtures import METADATA, WORDS, tables

from synthrisk.metrics import IdentifierReplay, TextReplay
from synthrisk.metrics.replay._minhash import (
    band_keys,
    candidate_pairs,
    jaccard_pairs,
    normalised_buffer,
    permutations,
)
from synthrisk.metrics.replay._normalise import Normaliser
from synthrisk.stats.exact import excess_greater_p

pytest.importorskip("phonenumbers")

PANEL_MD = {
    "columns": {
        "pid": {"kind": "id"},
        "email": {"kind": "pii"},
        "phone": {"kind": "pii"},
        "visit": {"kind": "numerical"},
    }
}


def test_normal_forms() -> None:
    n = Normaliser("US")
    assert n(" Ann.Lee@Mail.COM ") == "ann.lee@mail.com"
    assert (
        n("(555) 123-4567")
        == n("+1 555 123 4567")
        == n("555.123.4567")
        == n("1-555-123-4567")
        == "5551234567"
    )
    # international and national spellings of one number (another region's included)
    assert n("+44 20 1234 5678") == n("020-1234-5678") == n("+44 (0)20 1234 5678")
    assert n("+44 20 1234 5678") == "2012345678"
    assert n("+49 30 1234567") == n("030 1234567") == "301234567"
    assert n("DE89 3704 0044 0532 0130 00") == n("de89370400440532013000")
    assert n("AB-12 34") == "ab1234"
    assert n(None) == ""


def test_hand_counted_panel_people_exact_and_normalised() -> None:
    # training: person a (2 rows), b, c; holdout: d, e
    real = pd.DataFrame(
        {
            "pid": ["a", "a", "b", "c", "c"],
            "email": ["A@x.org", "a2@x.org", "b@x.org", "c@x.org", "c@x.org"],
            "phone": [
                "555-000-1111",
                "555-000-1111",
                "555-000-2222",
                "555-000-3333",
                None,
            ],
            "visit": [1, 2, 1, 1, 2],
        }
    )
    holdout = pd.DataFrame(
        {
            "pid": ["d", "d", "e"],
            "email": ["d@x.org", "d@x.org", "e@x.org"],
            "phone": ["555-000-4444", "555-000-4444", "555-000-5555"],
            "visit": [1, 2, 1],
        }
    )
    synthetic = pd.DataFrame(
        {
            "pid": ["s1", "s2", "s3", "s4"],
            # a exactly (a2@x.org), b normalised (B@X.ORG), d exactly
            "email": ["a2@x.org", " B@X.ORG", "d@x.org", "z@x.org"],
            # c after normalisation ((555) 000-3333)
            "phone": ["(555) 000-3333", "1", "2", "3"],
            "visit": [1, 1, 1, 1],
        }
    )
    result = IdentifierReplay(person="pid").compute(
        real, synthetic, holdout, metadata=PANEL_MD
    )
    cols = result.breakdown["columns"]
    assert cols["email"]["training_replayed"] == 2  # a, b: person a counts once
    assert cols["email"]["training_replayed_exact"] == 1
    assert cols["email"]["training_replayed_normalised"] == 1
    assert cols["email"]["holdout_replayed"] == 1
    assert cols["email"]["training_people"] == 3
    assert cols["email"]["holdout_people"] == 2
    assert cols["phone"]["training_replayed"] == 1
    assert cols["phone"]["holdout_replayed"] == 0
    assert "pid" not in cols  # the person key is not a value to check
    parts = {p["part"]: p for p in result.breakdown["holdout_test"]["components"]}
    assert parts["email"]["p_value"] == excess_greater_p(2, 3, 1, 2)
    assert parts["phone"]["p_value"] == excess_greater_p(1, 3, 0, 2)
    assert result.breakdown["replayed_training"] == 3
    entries = {(e["column"], tuple(e["rows"])): e for e in result.breakdown["replayed"]}
    assert entries[("email", (1,))]["synthetic_rows"] == [0]
    assert entries[("email", (1,))]["match"] == "exact"
    assert entries[("email", (2,))]["match"] == "normalised"
    assert entries[("phone", (3,))]["synthetic_rows"] == [0]
    assert result.records["replaying_rows"].index.tolist() == [0, 1]


def _json(result: object) -> str:
    data = result.to_dict(include_records=True)  # type: ignore[attr-defined]
    data.pop("seconds", None)
    return json.dumps(data, sort_keys=True, default=str)


def test_new_people_pass_and_values_never_in_json() -> None:
    real, holdout, synthetic = tables(600)
    for metric in (IdentifierReplay(), TextReplay()):
        result = metric.compute(real, synthetic, holdout, metadata=METADATA)
        assert result.breakdown["holdout_test"]["p_value"] > 0.05, metric.id
        text = _json(result)
        assert "@clinic.example" not in text
        assert WORDS[5] + " " not in text


def test_copied_emails_fail_and_values_only_on_request() -> None:
    real, holdout, synthetic = tables(600)
    synthetic.loc[:179, "email"] = real.loc[:179, "email"].to_numpy()  # 30 %
    result = IdentifierReplay().compute(real, synthetic, holdout, metadata=METADATA)
    assert result.breakdown["columns"]["email"]["training_replayed"] == 180
    assert result.breakdown["holdout_test"]["p_value"] < 1e-6
    assert result.warnings
    assert "synthetic rows" in result.warnings[-1]
    assert "@clinic.example" not in _json(result)
    shown = IdentifierReplay(include_values=True).compute(
        real, synthetic, holdout, metadata=METADATA
    )
    assert "@clinic.example" not in _json(shown)  # withheld from JSON by default
    assert "@clinic.example" in json.dumps(shown.to_dict(include_values=True))


def test_phones_with_changed_formatting_fail_by_normalised_match() -> None:
    real, holdout, synthetic = tables(600)
    k = 30  # 5 %
    digits = real.loc[: k - 1, "phone"].str.replace(r"\D", "", regex=True)
    synthetic.loc[: k - 1, "phone"] = (
        "+1 " + digits.str[:3] + "." + digits.str[3:6] + "." + digits.str[6:]
    ).to_numpy()
    result = IdentifierReplay(columns=["phone"]).compute(
        real, synthetic, holdout, metadata=METADATA
    )
    col = result.breakdown["columns"]["phone"]
    assert col["training_replayed_normalised"] >= k
    assert result.breakdown["holdout_test"]["p_value"] < 0.05


def test_verbatim_notes_fail() -> None:
    real, holdout, synthetic = tables(600)
    synthetic.loc[:29, "note"] = real.loc[:29, "note"].to_numpy()
    result = TextReplay().compute(real, synthetic, holdout, metadata=METADATA)
    col = result.breakdown["columns"]["note"]
    assert col["training_replayed"] == 30
    assert col["holdout_replayed"] == 0
    assert col["training_near_copies"] == 30
    assert col["training_spans"] == 30
    assert result.breakdown["holdout_test"]["p_value"] < 1e-6


def _changed(note: str, rng: np.random.Generator, k: int) -> str:
    words = note.split()
    for i in rng.choice(len(words), size=k, replace=False):
        words[i] = "changed"
    return " ".join(words)


def test_notes_with_words_changed_fail_as_near_copies() -> None:
    real, holdout, synthetic = tables(600)
    rng = np.random.default_rng(1)
    synthetic.loc[:29, "note"] = [
        _changed(n, rng, 2 + i % 2) for i, n in enumerate(real.loc[:29, "note"])
    ]
    result = TextReplay().compute(real, synthetic, holdout, metadata=METADATA)
    col = result.breakdown["columns"]["note"]
    assert col["training_near_copies"] == 30
    assert result.breakdown["holdout_test"]["p_value"] < 1e-6
    pairs = {tuple(e["rows"]): e for e in result.breakdown["replayed"]}
    assert all(0.5 <= pairs[(i,)]["jaccard"] < 1 for i in range(30))
    assert all(pairs[(i,)]["synthetic_rows"] == [i] for i in range(30))


def test_minhash_recall_of_planted_near_copies_and_exact_jaccard() -> None:
    rng = np.random.default_rng(2)
    base = [" ".join(rng.choice(WORDS, size=30)) for _ in range(500)]
    copies = [_changed(b, rng, 1 + i % 3) for i, b in enumerate(base[:200])]
    data, offsets = normalised_buffer(base + copies)
    a, b = permutations(96, 0)
    real_cells = np.arange(500)
    syn_cells = np.arange(500, 700)
    rk = band_keys(data, offsets, real_cells, width=3, a=a, b=b, rows=3)
    sk = band_keys(data, offsets, syn_cells, width=3, a=a, b=b, rows=3)
    left, right = candidate_pairs(rk, sk, cap=64)
    found = set(zip(left.tolist(), right.tolist(), strict=True))
    assert all((i, i) in found for i in range(200))  # every planted copy is a candidate
    jac = jaccard_pairs(data, offsets, left, 500 + right, width=3)
    planted = left == right
    assert (jac[planted] >= 0.5).all()
    assert (jac[~planted] < 0.2).all()
    # by hand: 30 words, one changed in the middle -> 28 shingles, 3 lost each side
    one = [i for i in range(200) if i % 3 == 0]
    sel = np.isin(left, one) & planted
    assert np.all(jac[sel] >= 22 / 31 - 1e-9)


@pytest.mark.parametrize("budget", [None, 64])
def test_exact_jaccard_against_python_sets(
    budget: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Word and byte shingles, repeated shingles, empty and short cells; in one block
    and in many (a budget of 64 shingles puts about one pair in each)."""
    import synthrisk.metrics.replay._minhash as minhash

    if budget is not None:
        monkeypatch.setattr(minhash, "_SET_BUDGET", budget)
    rng = np.random.default_rng(5)
    cells = [
        " ".join(rng.choice(WORDS[:6], size=rng.integers(0, 12))) for _ in range(60)
    ]
    cells += ["a a a a a", "ab", ""]
    data, offsets = normalised_buffer(cells)
    text = [
        bytes(data[offsets[i] : offsets[i + 1]]).decode() for i in range(len(cells))
    ]
    left = rng.integers(0, len(cells), size=400)
    right = rng.integers(0, len(cells), size=400)
    for chars, width in ((False, 2), (True, 3)):

        def shingles(t: str, chars: bool = chars, width: int = width) -> set[str]:
            units: list[str] | str = t if chars else t.split()
            if len(units) == 0:
                return set()
            if len(units) < width:
                return {"".join(units) if chars else " ".join(units) + "#short"}
            return {str(units[i : i + width]) for i in range(len(units) - width + 1)}

        got = jaccard_pairs(data, offsets, left, right, width=width, chars=chars)
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            x, y = shingles(text[a]), shingles(text[b])
            want = len(x & y) / len(x | y) if x and y else 0.0
            assert got[i] == pytest.approx(want, abs=1e-12), (text[a], text[b], chars)


def test_entities_inside_text() -> None:
    real, holdout, synthetic = tables(300)
    real = real.copy()
    real["note"] = real["note"] + " call " + real["phone"]
    synthetic = synthetic.copy()
    synthetic.loc[:29, "note"] = [
        " ".join(WORDS[:10]) + f" reach me at {p}" for p in real.loc[:29, "phone"]
    ]
    result = TextReplay().compute(real, synthetic, holdout, metadata=METADATA)
    col = result.breakdown["columns"]["note"]
    assert col["training_entities"] >= 30
    assert result.breakdown["holdout_test"]["p_value"] < 1e-6


def test_same_seed_same_json() -> None:
    real, holdout, synthetic = tables(300)
    synthetic.loc[:20, "note"] = real.loc[:20, "note"].to_numpy()
    first = TextReplay().compute(real, synthetic, holdout, metadata=METADATA, seed=4)
    second = TextReplay().compute(real, synthetic, holdout, metadata=METADATA, seed=4)
    assert _json(first) == _json(second)


def test_default_run_only_when_such_columns_exist() -> None:
    from synthrisk.schema.tables import prepare_tables

    real, holdout, synthetic = tables(100)
    with_cols = prepare_tables(real, synthetic, holdout, metadata=METADATA)
    without = prepare_tables(real[["age"]], synthetic[["age"]], holdout[["age"]])
    assert IdentifierReplay.applies_by_default(with_cols)
    assert TextReplay.applies_by_default(with_cols)
    assert not IdentifierReplay.applies_by_default(without)
    assert not TextReplay.applies_by_default(without)
    named = TextReplay().compute(real[["age"]], synthetic[["age"]], holdout[["age"]])
    assert named.score is None
    assert named.warnings


def test_the_fast_phone_path_agrees_with_phonenumbers() -> None:
    """The national significant number without parsing is what ``phonenumbers`` gives."""
    phonenumbers = pytest.importorskip("phonenumbers")
    from synthrisk.metrics.replay._normalise import Normaliser

    normalise = Normaliser("US")
    values = [
        "+1 555-201-3344",
        "(212) 555 0101",
        "212.555.0101",
        "1-212-555-0101",
        "+39 06 6982 1234",
        "+44 20 7946 0018",
        "+33 1 23 45 67 89",
    ]
    for value in values:
        parsed = phonenumbers.parse(value, "US")
        expected = phonenumbers.national_significant_number(parsed)
        assert normalise(value) == expected, value
    # a bracketed trunk prefix is parsed, not read digit by digit
    assert normalise("+44 (0)20 7946 0018") == "2079460018"


def test_text_unique_counts_and_chance_model_on_a_tiny_table() -> None:
    real, holdout, synthetic = tables(200, seed=7)
    real, holdout, synthetic = real.copy(), holdout.copy(), synthetic.copy()
    # training rows 0-4 copied verbatim (theirs alone); training 10 and holdout 0 share
    # one note, which synthetic row 5 copies (matches two people: not unique)
    synthetic.loc[:4, "note"] = real.loc[:4, "note"].to_numpy()
    holdout.loc[0, "note"] = real.loc[10, "note"]
    synthetic.loc[5, "note"] = real.loc[10, "note"]
    result = TextReplay().compute(real, synthetic, holdout, metadata=METADATA, seed=1)
    bd = result.breakdown
    assert bd["replayed_training"] == 6
    assert bd["replayed_holdout"] == 1
    assert bd["unique_replayed_training"] == 5
    assert bd["unique_replayed_holdout"] == 0
    chance = bd["chance_model"]
    assert chance["column"] == "note"
    assert chance["replayed"] == 5  # training singletons near-copied
    assert chance["training_singletons"] == 199
    assert chance["holdout_replayed"] == 0
