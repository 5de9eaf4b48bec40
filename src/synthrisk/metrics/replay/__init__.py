# SPDX-License-Identifier: BSD-3-Clause
"""Replay: real people's identifiers and free text carried into the synthetic table.

Columns of kind ``id``, ``pii`` and ``text`` are left out of every other metric. These
metrics check them, holdout-controlled and with people as the unit (``docs/replay.md``):

* :class:`IdentifierReplay` (``identifier_replay``): e-mails, phone numbers and codes,
  exactly and after normalisation;
* :class:`TextReplay` (``text_replay``): near copies (MinHash + exact Jaccard), verbatim
  spans and identifiers inside free text;
* :class:`RowStringReplay` (``row_string_replay``): whole rows serialised as text and
  near-copied (character shingles, MinHash + exact Jaccard).

They run by default only on tables that have such columns. Two more check the columns
the other metrics use, for what points at one person:

* :class:`RareValueReplay` (``rare_value_replay``): values (and extremes) that at most
  ``max_people`` real people hold;
* :class:`QuasiIdentifierReplay` (``quasi_identifier_replay``): combinations of the
  attacker-known columns (date of birth, postcode, sex ...) that single out one person.
"""

from __future__ import annotations

from synthrisk.metrics.replay.identifier import IdentifierReplay
from synthrisk.metrics.replay.quasi_identifier import QuasiIdentifierReplay
from synthrisk.metrics.replay.rare import RareValueReplay
from synthrisk.metrics.replay.row_string import RowStringReplay
from synthrisk.metrics.replay.text import TextReplay

__all__ = [
    "IdentifierReplay",
    "QuasiIdentifierReplay",
    "RareValueReplay",
    "RowStringReplay",
    "TextReplay",
]
