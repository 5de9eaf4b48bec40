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

They run by default only on tables that have such columns.
"""

from __future__ import annotations

from synthrisk.metrics.replay.identifier import IdentifierReplay
from synthrisk.metrics.replay.row_string import RowStringReplay
from synthrisk.metrics.replay.text import TextReplay

__all__ = ["IdentifierReplay", "RowStringReplay", "TextReplay"]
