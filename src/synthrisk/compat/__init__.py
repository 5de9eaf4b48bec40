# SPDX-License-Identifier: BSD-3-Clause
"""Drop-in layers that mirror reference libraries' APIs on top of synthrisk's metrics."""
