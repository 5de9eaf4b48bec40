# SPDX-License-Identifier: BSD-3-Clause
"""Drop-in layers that mirror the APIs of the reference libraries, backed by synthrisk."""
