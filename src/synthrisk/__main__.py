# SPDX-License-Identifier: BSD-3-Clause
"""``python -m synthrisk``: the command line, as the ``synthrisk`` command."""

from __future__ import annotations

import sys

from synthrisk.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
