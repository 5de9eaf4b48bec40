# SPDX-License-Identifier: BSD-3-Clause
"""The attacker-known columns (quasi-identifiers) found by name: one rule for every family.

Date of birth, postcode, sex, age ... (:data:`KNOWN_NAMES`): ``quasi_identifier_replay``
looks for rare combinations of them, ``reidentification_risk`` and ``sdc_risk`` measure
the classical re-identification risk on them. synthrisk's metadata has no
quasi-identifier flag, so the columns are found by their names.
"""

from __future__ import annotations

import re

from synthrisk.metrics._persons import find_person_column
from synthrisk.schema.tables import Tables

__all__ = ["KNOWN_NAMES", "KNOWN_RULE", "known_columns", "known_label"]

#: what an attacker knows of a person, and the column names (after lower-casing and
#: turning camelCase, spaces, dots and hyphens into ``_``) that say a column holds it
KNOWN_NAMES: tuple[tuple[str, str], ...] = (
    ("date of birth", r"dob|d_o_b|birth_?date|date_?of_?birth|birth_?day|bday"),
    ("year of birth", r"yob|birth_?year|year_?of_?birth"),
    (
        "place of birth",
        r"birth_?place|place_?of_?birth|country_?of_?birth|native_?country",
    ),
    ("postcode", r"zip|zip_?code|zip\d|post_?code|postal|postal_?code|plz"),
    ("sex", r"sex|gender"),
    ("age", r"age|age_?(?:group|band|range|years|cat|category)"),
    ("race or ethnicity", r"race|ethnicity|ethnic|ethnic_?(?:group|origin)"),
    ("marital status", r"marital|marital_?status|civil_?status"),
    (
        "place of residence",
        r"city|town|municipality|county|district|residence|place_?of_?residence|province|"
        r"region|neighbou?rhood|borough|locality|commune",
    ),
    ("nationality", r"nationality|citizenship|country"),
)
_KNOWN_RE = [
    (label, re.compile(rf"(?:^|_)(?:{pattern})(?:_|$)"))
    for label, pattern in KNOWN_NAMES
]
#: "state" alone is too common a word ("disease_state"): only these whole names
_STATE_RE = re.compile(r"^(?:us_)?state(?:_code|_of_residence)?$")
_NOT_KNOWN_KINDS = ("id", "text")

#: what ``columns_chosen_by`` says when the rule chose the columns
KNOWN_RULE = (
    "columns named like date of birth, year or place of birth, postcode/zip, sex/gender, age, "
    "race/ethnicity, marital status, place of residence (city, municipality, county, region ...) "
    "or nationality/country (case-insensitive, any separators; not of kind id or text, not the "
    "person key); synthrisk's metadata has no quasi-identifier flag, so name others in `columns`"
)


def _normal_name(name: str) -> str:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", str(name))
    return re.sub(r"[^a-z0-9]+", "_", spaced.lower()).strip("_")


def known_label(name: str) -> str | None:
    """What an attacker-known column holds, by its name ("sex", "postcode" ...), or None."""
    normal = _normal_name(name)
    for label, pattern in _KNOWN_RE:
        if pattern.search(normal):
            return label
    return "place of residence" if _STATE_RE.match(normal) else None


def known_columns(tables: Tables, *, person: str | None) -> list[str]:
    """The attacker-known columns found by name (see :data:`KNOWN_NAMES`), in table order."""
    key = None
    if tables.holdout is not None:
        key = find_person_column(tables) if person == "auto" else person
    return [
        spec.name
        for spec in tables.schema.columns
        if spec.kind not in _NOT_KNOWN_KINDS
        and spec.name != key
        and spec.name in tables.synthetic.columns
        and known_label(spec.name) is not None
    ]
