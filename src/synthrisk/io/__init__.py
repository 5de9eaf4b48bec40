# SPDX-License-Identifier: BSD-3-Clause
"""Reading tables, metadata and YAML configs; writing outputs atomically."""

from __future__ import annotations

from synthrisk.io.files import (
    add_provenance,
    read_metadata,
    read_table,
    sha256_file,
    write_text_atomic,
    write_texts_atomic,
)
from synthrisk.io.run_file import RunConfig, load_config

__all__ = [
    "RunConfig",
    "add_provenance",
    "load_config",
    "read_metadata",
    "read_table",
    "sha256_file",
    "write_text_atomic",
    "write_texts_atomic",
]
