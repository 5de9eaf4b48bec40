# SPDX-License-Identifier: BSD-3-Clause
"""Plots of the HTML report, drawn with matplotlib into SVG data URIs.

Each function takes a result's JSON form (never a DataFrame) and returns a
:class:`Plot` or None when the result does not have the shape the plot needs.
SVG output is deterministic (fixed hash salt, no date), so the same report renders to
the same bytes. Figures are built with :class:`matplotlib.figure.Figure` directly: no
pyplot state, no GUI backend.

Inside :func:`drawn_together` a plot is not drawn when it is made: its ``src`` is a
unique placeholder, and ``fill(html)`` draws every pending plot at the end, side by side
in forked worker processes where that pays (:func:`synthrisk._workers.forked_map`; the
same bytes as one after another), and puts each data URI in its placeholder's place.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import dataclasses
import io
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from synthrisk._format import format_number
from synthrisk._optional import import_optional
from synthrisk._workers import forked_map
from synthrisk.report._extract import (
    distance_records,
    find_roc,
    finite_values,
    is_probability,
    rates,
    real_records,
)

__all__ = ["GREY", "PALETTE", "Plot", "drawn_together", "plots_for", "styles"]

#: Okabe and Ito's colour-blind-safe palette ("Color Universal Design", 2008), less its
#: yellow, too light on white; every curve of one plot gets its own colour and line style
PALETTE = ("#D55E00", "#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
#: baselines (random rows, random guessing, no skill): a neutral grey
GREY = "#6B6B6B"
LINESTYLES = (
    "solid",
    "dashed",
    "dotted",
    "dashdot",
    (0, (6, 2, 1, 2, 1, 2)),
    (0, (1, 1)),
)
#: bar fills, for telling bars apart in black and white too
HATCHES = ("", "//", "--", "xx", "\\\\", "++")
#: each role's own colour and line style, kept whenever no other curve of the plot has it
_ROLES: dict[str, tuple[str, Any]] = {
    "synthetic_to_real": (PALETTE[0], "solid"),
    "holdout_to_real": (PALETTE[1], "dashed"),
    "random_to_real": (GREY, "dotted"),
    "synthetic_to_holdout": (PALETTE[2], "dashdot"),
    "attack": (PALETTE[0], "solid"),
    "control": (PALETTE[1], "dashed"),
    "baseline": (GREY, "dotted"),
}
_RC = {
    "svg.hashsalt": "synthrisk",
    "svg.fonttype": "none",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
}


@dataclasses.dataclass(frozen=True)
class Plot:
    """One rendered plot: a title, an ``<img>`` source and its alternative text."""

    kind: str
    title: str
    src: str
    alt: str


_Pending = tuple[str, list[tuple[Callable[[Any], None], float, float]]]
#: inside :func:`drawn_together`: its placeholders' key and the plots still to draw
_PENDING: contextvars.ContextVar[_Pending | None] = contextvars.ContextVar(
    "synthrisk_pending_plots", default=None
)


@contextlib.contextmanager
def drawn_together() -> Iterator[Callable[[str], str]]:
    """Defer the plots made inside; yields ``fill(html)``, which draws them all.

    ``fill`` replaces each plot's placeholder in ``html`` with its data URI. The
    placeholders hold a random key, so no text of the report can be taken for one.
    """
    pending: _Pending = (uuid.uuid4().hex, [])
    token = _PENDING.set(pending)
    try:

        def fill(html: str) -> str:
            key, plots = pending
            uris = forked_map(lambda i: _render(*plots[i]), len(plots))
            for i, uri in enumerate(uris):
                html = html.replace(_placeholder(key, i), uri)
            return html

        yield fill
    finally:
        _PENDING.reset(token)


def _placeholder(key: str, i: int) -> str:
    return f"synthrisk-plot-{key}-{i}-"


def _draw(draw: Callable[[Any], None], width: float = 5.6, height: float = 2.8) -> str:
    """The plot ``draw(ax)`` draws as a data URI (a placeholder in :func:`drawn_together`)."""
    pending = _PENDING.get()
    if pending is None:
        return _render(draw, width, height)
    key, plots = pending
    plots.append((draw, width, height))
    return _placeholder(key, len(plots) - 1)


def _render(draw: Callable[[Any], None], width: float, height: float) -> str:
    """Call ``draw(ax)`` on a new figure in the report's style; the SVG as a data URI."""
    matplotlib = import_optional("matplotlib", extra="report")
    figure_mod = import_optional("matplotlib.figure", extra="report")
    buffer = io.BytesIO()
    with matplotlib.rc_context(_RC), warnings.catch_warnings():
        # a column name with an emoji: the font lacks the glyph, the plot shows a box
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font")
        fig = figure_mod.Figure(figsize=(width, height), dpi=100, layout="constrained")
        draw(fig.add_subplot())
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    svg = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f"data:image/svg+xml;base64,{svg}"


def _label(name: str) -> str:
    return name.replace("_to_", " → ").replace("_", " ")


def styles(roles: Sequence[str]) -> list[tuple[str, Any]]:
    """A colour and a line style for each curve of one plot, no two curves sharing either.

    A role (``synthetic_to_real``, ``attack``, ``baseline`` …) keeps its own colour and
    style unless an earlier curve of the plot took them; the others get the first free
    ones of :data:`PALETTE` and :data:`LINESTYLES`.
    """
    colours = [*PALETTE, GREY]
    out: list[tuple[str, Any]] = []
    used_colours: set[str] = set()
    used_styles: list[Any] = []
    for role in roles:
        colour: str | None
        style: Any
        colour, style = _ROLES.get(role, (None, None))
        if colour is None or colour in used_colours:
            colour = next((c for c in colours if c not in used_colours), None)
        if style is None or style in used_styles:
            style = next((s for s in LINESTYLES if s not in used_styles), "solid")
        if colour is None:  # more curves than colours: cycle, the style still differs
            colour = colours[len(out) % len(colours)]
        used_colours.add(colour)
        used_styles.append(style)
        out.append((colour, style))
    return out


def distance_plot(result: Mapping[str, Any]) -> Plot | None:
    """Overlaid distributions (step histograms) of the ``*_to_*`` distance record sets."""
    records = distance_records(result)
    series = {name: np.asarray(finite_values(rec)) for name, rec in records.items()}
    series = {name: values for name, values in series.items() if values.size}
    if not series:
        return None

    def draw(ax: Any) -> None:
        everything = np.concatenate(list(series.values()))
        high = float(np.quantile(everything, 0.995)) if everything.size else 1.0
        high = high if high > 0 else float(everything.max()) or 1.0
        bins = np.linspace(0.0, high, 41)
        for (name, values), (colour, style) in zip(
            series.items(), styles(list(series)), strict=True
        ):
            clipped = np.clip(values, 0.0, high)
            median = float(np.median(values))
            ax.hist(
                clipped,
                bins=bins,
                histtype="step",
                linewidth=1.8,
                linestyle=style,
                color=colour,
                weights=np.full(values.size, 1.0 / values.size),
                label=f"{_label(name)} (n={values.size}, median {format_number(median, 3)})",
            )
            ax.axvline(median, color=colour, linestyle=style, linewidth=0.9, alpha=0.7)
        ax.set_xlabel(
            "distance to the closest record (values above the 99.5th percentile drawn at the edge)"
        )
        ax.set_ylabel("share of rows")
        ax.set_title("Distance to closest record")
        ax.legend(frameon=False, fontsize=8)

    src = _draw(draw)
    names = ", ".join(_label(n) for n in series)
    return Plot(
        "distances", "Distance distributions", src, f"Histograms of distances: {names}."
    )


def rates_plot(result: Mapping[str, Any]) -> Plot | None:
    """Attack, baseline and control success rates with their error bars."""
    found = rates(result)
    if not found:
        return None
    labels, values, errors, roles = [], [], [], []
    names = {
        "attack_rate": "attack (real rows)",
        "baseline_rate": "baseline (random guess)",
        "control_rate": "control (holdout rows)",
    }
    for key in ("attack_rate", "baseline_rate", "control_rate"):
        if key in found and found[key][0] is not None:
            value, error = found[key]
            labels.append(names[key])
            roles.append(key.removesuffix("_rate"))
            values.append(float(value))  # type: ignore[arg-type]
            errors.append(0.0 if error is None else float(error))
    if not values:
        return None

    def draw(ax: Any) -> None:
        ypos = np.arange(len(values))[::-1]
        for i, ((colour, _), role) in enumerate(zip(styles(roles), roles, strict=True)):
            ax.barh(
                ypos[i],
                values[i],
                xerr=errors[i],
                color=colour,
                alpha=0.85,
                capsize=4,
                height=0.6,
                hatch=HATCHES[i % len(HATCHES)],
                edgecolor="white",
                label=role,
            )
        for y, value, error in zip(ypos, values, errors, strict=True):
            ax.text(
                min(value + error, 1.0) + 0.01,
                y,
                f"{format_number(value, 3)} ± {format_number(error, 3)}",
                va="center",
                fontsize=8,
            )
        ax.set_yticks(ypos, labels)
        ax.set_xlim(0, 1.15)
        ax.set_xlabel("success rate (Wilson estimate ± error)")
        ax.set_title("Attack success rates")

    src = _draw(draw, height=0.6 + 0.55 * len(values))
    alt = "; ".join(
        f"{lab}: {v:.3f} ± {e:.3f}"
        for lab, v, e in zip(labels, values, errors, strict=True)
    )
    return Plot(
        "rates", "Attack, baseline and control rates", src, f"Success rates: {alt}."
    )


def roc_plot(result: Mapping[str, Any]) -> Plot | None:
    """ROC curve of a membership attack (points from the breakdown)."""
    roc = find_roc(result)
    if roc is None:
        return None
    auc = roc["auc"]

    def draw(ax: Any) -> None:
        label = "attack" if auc is None else f"attack (AUC {auc:.3f})"
        (attack, attack_style), (chance, chance_style) = styles(["attack", "baseline"])
        ax.plot(
            roc["fpr"],
            roc["tpr"],
            color=attack,
            linestyle=attack_style,
            linewidth=1.8,
            label=label,
        )
        ax.plot(
            [0, 1],
            [0, 1],
            color=chance,
            linestyle=chance_style,
            linewidth=1.2,
            label="no skill (AUC 0.5)",
        )
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.01)
        ax.set_xlabel("false positive rate (holdout rows called members)")
        ax.set_ylabel("true positive rate")
        ax.set_title("ROC of the membership attack")
        ax.legend(frameon=False, loc="lower right", fontsize=8)

    src = _draw(draw, 4.2, 3.6)
    auc_text = "" if auc is None else f" AUC {auc:.3f}."
    return Plot(
        "roc", "ROC curve", src, f"ROC curve with {len(roc['fpr'])} points.{auc_text}"
    )


def record_risk_plot(result: Mapping[str, Any]) -> Plot | None:
    """Distribution of per-record risks of real rows (record sets with values in [0, 1])."""
    series = {
        name: np.asarray(finite_values(rec))
        for name, rec in real_records(result).items()
        if is_probability(rec)
    }
    if not series:
        return None

    def draw(ax: Any) -> None:
        bins = np.linspace(0.0, 1.0, 21)
        for (name, values), (colour, style) in zip(
            series.items(), styles(list(series)), strict=True
        ):
            ax.hist(
                values,
                bins=bins,
                histtype="stepfilled" if len(series) == 1 else "step",
                alpha=0.75,
                color=colour,
                linestyle=style,
                linewidth=1.6,
                label=f"{_label(name)} (n={values.size}, mean {format_number(float(values.mean()), 3)})",
            )
        ax.set_xlim(0, 1)
        ax.set_xlabel("per-record value (higher = more at risk)")
        ax.set_ylabel("real rows")
        ax.set_title("Per-record risk of real rows")
        ax.legend(frameon=False, fontsize=8)

    src = _draw(draw)
    names = ", ".join(_label(n) for n in series)
    return Plot(
        "record_risk",
        "Per-record risk",
        src,
        f"Histogram of per-record values of real rows: {names}.",
    )


def columns_plot(result: Mapping[str, Any]) -> Plot | None:
    """Per-column excess over the holdout with its interval (``breakdown.columns`` with ``effect_ci``)."""
    columns = (result.get("breakdown") or {}).get("columns")
    if not isinstance(columns, Mapping):
        return None
    names, values, lows, highs = [], [], [], []
    for name, entry in columns.items():
        if not isinstance(entry, Mapping) or entry.get("effect") is None:
            continue
        ci = entry.get("effect_ci") or [entry["effect"], entry["effect"]]
        names.append(str(name))
        values.append(float(entry["effect"]))
        lows.append(float(entry["effect"]) - float(ci[0]))
        highs.append(float(ci[1]) - float(entry["effect"]))
    if not names:
        return None

    def draw(ax: Any) -> None:
        ypos = np.arange(len(names))[::-1]
        ax.barh(
            ypos,
            values,
            xerr=[lows, highs],
            color=PALETTE[0],
            alpha=0.8,
            capsize=3,
            height=0.6,
        )
        ax.axvline(0.0, color="#555555", linewidth=0.8)
        ax.set_yticks(ypos, names)
        ax.set_xlabel(
            "success on training people minus on holdout people (95 % interval)"
        )
        ax.set_title("Which columns leak: excess over the holdout per secret column")

    src = _draw(draw, height=0.6 + 0.3 * len(names))
    alt = "; ".join(f"{n}: {v:+.3f}" for n, v in zip(names, values, strict=True))
    return Plot(
        "columns",
        "Excess over the holdout per column",
        src,
        f"Per-column excess: {alt}.",
    )


def plots_for(result: Mapping[str, Any]) -> list[Plot]:
    """Every plot that ``result`` has the data for, in a fixed order."""
    out = []
    for make in (rates_plot, columns_plot, roc_plot, distance_plot, record_risk_plot):
        plot = make(result)
        if plot is not None:
            out.append(plot)
    return out
