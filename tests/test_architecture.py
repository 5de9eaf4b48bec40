# SPDX-License-Identifier: BSD-3-Clause
"""``docs/architecture.md`` draws the real tree and the real layers.

The tree names every package, every top-level module, every metric family and every
module of the neighbour search, and nothing that does not exist; the layer drawing lists
the layers of ``tests/test_layering.py`` in their order.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "synthrisk"
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def _block(heading: str) -> list[str]:
    """The lines of the first fenced block after ``heading``."""
    after = DOC.split(heading, 1)[1]
    return after.split("```", 2)[1].splitlines()[1:]


def _tree() -> dict[str, str]:
    """Path (relative to ``src/synthrisk``) -> its description, for every entry drawn."""
    entries: dict[str, str] = {}
    stack: list[str] = []
    for line in _block("## The tree"):
        match = re.match(r"^([│ ]*)[├└]── (\S+)\s*(.*)$", line)
        if match is None:
            continue
        depth = len(match.group(1)) // 4
        stack = [*stack[:depth], match.group(2).rstrip("/")]
        entries["/".join(stack)] = match.group(3)
    return entries


def _layers() -> dict[str, int]:
    path = ROOT / "tests" / "test_layering.py"
    spec = importlib.util.spec_from_file_location("_layering", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.LAYERS)


def test_every_drawn_entry_exists() -> None:
    missing = [p for p in _tree() if not (SRC / p).exists()]
    assert not missing, (
        f"docs/architecture.md draws what is not in src/synthrisk: {missing}"
    )


def test_every_package_and_top_level_module_is_drawn() -> None:
    drawn = set(_tree())
    present = {
        p.name
        for p in SRC.iterdir()
        if (p.suffix == ".py") or (p.is_dir() and (p / "__init__.py").is_file())
    }
    assert present - drawn == set(), sorted(present - drawn)


def test_every_metric_family_and_metrics_module_is_drawn() -> None:
    drawn = set(_tree())
    metrics = SRC / "metrics"
    present = {
        f"metrics/{p.name}"
        for p in metrics.iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py")
        or (p.is_dir() and (p / "__init__.py").is_file())
    }
    assert present - drawn == set(), sorted(present - drawn)


def test_every_neighbors_module_is_named() -> None:
    # the search engine is where the backends and kernels live: each one is named
    text = "\n".join(f"{path} {about}" for path, about in _tree().items())
    unnamed = [
        p.name
        for p in (SRC / "neighbors").glob("*.py")
        if p.name != "__init__.py" and p.name not in text
    ]
    assert not unnamed, unnamed


def test_the_layer_drawing_matches_the_layering_test() -> None:
    layers = _layers()
    drawn: list[list[str]] = []
    foundation: list[str] = []
    in_foundation = False
    for line in _block("## Layers"):
        text = line.strip()
        if not text:
            continue
        if text.startswith("foundation:") or in_foundation:
            in_foundation = True
            foundation += re.findall(r"[_a-z]+", text.removeprefix("foundation:"))
            continue
        drawn.append([name.strip() for name in text.split("·")])
    named = [name for row in drawn for name in row]
    assert sorted(named + [f for f in foundation if f != "then"]) == sorted(layers)
    for row in drawn:
        assert len({layers[name] for name in row}) == 1, f"one layer per line: {row}"
    order = [layers[row[0]] for row in drawn]
    assert order == sorted(order, reverse=True), "the drawing lists the top layer first"
    assert all(layers[f] <= 1 for f in foundation if f != "then")
    assert min(order) > 1
