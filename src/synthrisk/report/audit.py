# SPDX-License-Identifier: BSD-3-Clause
"""The HTML page of a generator audit (:func:`synthrisk.audit.audit`).

It renders the audit's JSON form (``AuditResult.to_dict()``), so that a saved audit renders
again without the audit package: the verdict line, the threat model, each attack pooled
over the targets with their ROC curves (linear, and log-log for the low false-positive
rates), the worst-case canaries' attacks beside the real people's when the audit
inserted canaries, one row per target (row numbers or canary numbers, never values) with
each target's ROC curve of its best attack, the runs and settings, and a plot of each
target's ε lower bound. Every text is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synthrisk._format import format_number
from synthrisk._optional import is_available
from synthrisk._version import __version__
from synthrisk.exceptions import ParameterError
from synthrisk.report._plots import GREY, PALETTE, _draw, drawn_together, styles
from synthrisk.report.html import _environment

__all__ = ["render_audit_html"]


def _interval(pair: Any) -> str:
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        return "—"
    return f"[{format_number(pair[0], 3)}, {format_number(pair[1], 3)}]"


def _attack_rows(overall: Mapping[str, Any]) -> list[dict[str, str]]:
    rows = []
    for name, bound in overall.items():
        rates = bound.get("tpr_at_fpr") or {}
        rows.append(
            {
                "name": str(name),
                "epsilon": format_number(bound.get("epsilon_lower"), 3),
                "auc": format_number(bound.get("auc"), 3),
                "tpr_1": format_number(rates.get("0.01"), 3),
                "tpr_10": format_number(rates.get("0.1"), 3),
                "tpr": _interval(bound.get("tpr")),
                "fpr": _interval(bound.get("fpr")),
                "counts": f"{bound.get('n_members', 0)} / {bound.get('n_non_members', 0)}",
            }
        )
    return rows


def _label(target: Mapping[str, Any]) -> str:
    """``"17"`` for a real person's row, ``"canary 2"`` for a canary."""
    row = target.get("row")
    return f"canary {target.get('canary')}" if row is None else str(row)


def _target_rows(
    targets: list[Mapping[str, Any]], attack_names: list[str]
) -> list[dict[str, Any]]:
    rows = []
    for t in targets:
        attacks = t.get("attacks") or {}
        rows.append(
            {
                "row": _label(t),
                "source": t.get("source"),
                "isolation": format_number(t.get("isolation"), 3),
                "n_included": t.get("n_included"),
                "epsilon": format_number(t.get("epsilon_lower"), 3),
                "best_attack": t.get("best_attack") or "—",
                "aucs": [
                    format_number((attacks.get(a) or {}).get("auc"), 3)
                    for a in attack_names
                ],
            }
        )
    return rows


def _targets_plot(targets: list[Mapping[str, Any]]) -> dict[str, str] | None:
    """Each target's ε lower bound, most vulnerable first (needs matplotlib); None when
    every bound is 0 (an axis of zeros says nothing: :func:`_targets_note` says it)."""
    if not targets or not (is_available("matplotlib") and is_available("jinja2")):
        return None
    values = [float(t.get("epsilon_lower") or 0.0) for t in targets]
    if not any(v > 0 for v in values):
        return None
    labels = [_label(t) for t in targets]

    def draw(ax: Any) -> None:
        ax.bar(range(len(values)), values, color=PALETTE[0])
        ax.set_xticks(
            range(len(values)), labels, rotation=90 if len(values) > 12 else 0
        )
        ax.set_xlabel("target (row of the real table, or canary)")
        ax.set_ylabel("ε lower bound")
        ax.set_title("Each target's ε lower bound")

    return {
        "uri": _draw(draw),
        "alt": "bar chart: "
        + ", ".join(
            f"{r if r.startswith('canary') else f'row {r}'}: {format_number(v, 3)}"
            for r, v in zip(labels, values, strict=True)
        ),
        "caption": "The bound each target reaches with its best attack (0: no attack refuted any ε).",
    }


def _targets_note(targets: list[Mapping[str, Any]]) -> str | None:
    """The words that replace the targets' bar chart when every bound is 0."""
    if not targets or any(float(t.get("epsilon_lower") or 0.0) > 0 for t in targets):
        return None
    n = len(targets)
    return (
        f"No target's ε lower bound is above 0: no attack refuted any ε for "
        f"{'the one target' if n == 1 else f'any of the {n} targets'} (so no chart of "
        "the bounds is drawn). A bound of 0 proves nothing: other attacks, targets or "
        "more runs may do better."
    )


def _curve(bound: Any) -> tuple[list[float], list[float]] | None:
    roc = (bound or {}).get("roc") if isinstance(bound, Mapping) else None
    if not isinstance(roc, Mapping):
        return None
    fpr, tpr = roc.get("fpr"), roc.get("tpr")
    if not isinstance(fpr, list) or not isinstance(tpr, list) or len(fpr) != len(tpr):
        return None
    return [float(v) for v in fpr], [float(v) for v in tpr]


def _roc_plots(
    overall: Mapping[str, Any], targets: list[Mapping[str, Any]]
) -> list[dict[str, str]]:
    """The attacks' pooled ROC curves (linear and log-log) and each target's best-attack curve."""
    if not (is_available("matplotlib") and is_available("jinja2")):
        return []
    curves = {
        str(name): c for name, b in overall.items() if (c := _curve(b)) is not None
    }
    plots: list[dict[str, str]] = []
    if curves:
        looks = styles(list(curves))
        aucs = {
            name: format_number((overall.get(name) or {}).get("auc"), 3)
            for name in curves
        }

        def draw(ax: Any, *, log: bool) -> None:
            for (name, (fpr, tpr)), (colour, style) in zip(
                curves.items(), looks, strict=True
            ):
                if log:
                    keep = [
                        i
                        for i, (f, t) in enumerate(zip(fpr, tpr, strict=True))
                        if f > 0 and t > 0
                    ]
                    fpr = [fpr[i] for i in keep]
                    tpr = [tpr[i] for i in keep]
                ax.step(
                    fpr,
                    tpr,
                    where="post",
                    color=colour,
                    linestyle=style,
                    label=f"{name} (AUC {aucs[name]})",
                )
            low = 1e-3 if log else 0.0
            ax.plot([low, 1], [low, 1], color=GREY, linestyle=":", label="random guess")
            if log:
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_xlim(low, 1)
                ax.set_ylim(low, 1)
            ax.set_xlabel("false-positive rate" + (" (log)" if log else ""))
            ax.set_ylabel("true-positive rate" + (" (log)" if log else ""))
            ax.set_title(
                "ROC, all targets pooled"
                + (", low false-positive rates" if log else "")
            )
            ax.legend(loc="lower right", fontsize="small")

        alt = "ROC curves of the attacks, all targets pooled: " + ", ".join(
            f"{name} AUC {auc}" for name, auc in aucs.items()
        )
        plots.append(
            {
                "uri": _draw(lambda ax: draw(ax, log=False), height=4.0),
                "alt": alt,
                "caption": (
                    "Each attack's ROC curve on the evaluation runs, the targets pooled as for "
                    "the bound. The dotted diagonal is random guessing."
                ),
            }
        )
        plots.append(
            {
                "uri": _draw(lambda ax: draw(ax, log=True), height=4.0),
                "alt": alt + " (log-log axes)",
                "caption": (
                    "The same curves on log-log axes: the low false-positive rates, where a "
                    "confident attack shows (Carlini et al. 2022, 'Membership inference attacks "
                    "from first principles')."
                ),
            }
        )
    per_target = []
    for t in targets:
        best = t.get("best_attack") or next(iter(t.get("attacks") or {}), None)
        curve = _curve((t.get("attacks") or {}).get(best)) if best else None
        if curve is not None:
            label = _label(t)
            if not label.startswith("canary"):
                label = f"row {label}"
            per_target.append((label, str(best), curve))
    if per_target:
        # its own name: the ROC plot's ``draw`` above reads ``looks`` when it is drawn
        target_looks = styles([f"target-{i}" for i in range(len(per_target))])

        def draw_targets(ax: Any) -> None:
            for (row, attack, (fpr, tpr)), (colour, style) in zip(
                per_target, target_looks, strict=True
            ):
                ax.step(
                    fpr,
                    tpr,
                    where="post",
                    color=colour,
                    linestyle=style,
                    linewidth=1.0,
                    label=f"{row} ({attack})",
                )
            ax.plot([0, 1], [0, 1], color=GREY, linestyle=":")
            ax.set_xlabel("false-positive rate")
            ax.set_ylabel("true-positive rate")
            ax.set_title("ROC of each target's best attack")
            if len(per_target) <= 12:
                ax.legend(loc="lower right", fontsize="x-small")

        plots.append(
            {
                "uri": _draw(draw_targets, height=4.0),
                "alt": "ROC curves of each target's best attack: "
                + ", ".join(f"{row} ({attack})" for row, attack, _ in per_target),
                "caption": (
                    "Each target's ROC curve for the attack that gave it its largest bound (the "
                    "first attack when none refuted any ε), on its own evaluation runs only, so "
                    "the steps are coarse."
                ),
            }
        )
    return plots


def render_audit_html(
    audit: Mapping[str, Any],
    *,
    verdict: Mapping[str, Any] | None = None,
    title: str | None = None,
) -> str:
    """Render a generator audit to a self-contained HTML page.

    Parameters
    ----------
    audit : dict
        The audit's JSON form (``AuditResult.to_dict()``).
    verdict : dict, default=None
        ``AuditResult.verdict(max_epsilon).to_dict()``: the page then says pass or fail;
        None reports the bound without gating.
    title : str, default=None
        Page title.

    Returns
    -------
    str
        The HTML.

    Raises
    ------
    ParameterError
        If ``audit`` is not an audit's JSON form.
    """
    if not isinstance(audit, Mapping) or audit.get("kind") != "generator_audit":
        msg = (
            "`audit` must be a generator audit's JSON form (AuditResult.to_dict(), or a "
            'saved audit JSON with "kind": "generator_audit").'
        )
        raise ParameterError(msg)
    overall = audit.get("overall") or {}
    canaries = audit.get("canaries") or None
    canary_overall = (canaries or {}).get("overall") or {}
    attack_names = [str(name) for name in overall or canary_overall]
    targets = list(audit.get("targets") or [])
    level = "info"
    if verdict is not None:
        level = str(
            verdict.get("level") or ("pass" if verdict.get("passed") else "fail")
        )
    # the plots are drawn at the end, side by side where that pays
    with drawn_together() as fill:
        settings = audit.get("settings") or {}
        context = {
            "title": title or "synthrisk generator audit",
            "version": __version__,
            "data": audit,
            "level": level,
            "verdict": verdict,
            "epsilon": format_number(audit.get("epsilon_lower"), 3),
            "best_attack": audit.get("best_attack"),
            "threat_model": sorted((audit.get("threat_model") or {}).items()),
            "attacks": _attack_rows(overall),
            "canaries": canaries,
            "canary_attacks": _attack_rows(canary_overall),
            "canary_epsilon": format_number((canaries or {}).get("epsilon_lower"), 3),
            "natural_epsilon": format_number(audit.get("epsilon_lower_natural"), 3),
            "attack_names": attack_names,
            "targets": _target_rows(targets, attack_names),
            "plot": _targets_plot(targets),
            "targets_note": _targets_note(targets),
            "roc_plots": _roc_plots(overall, targets),
            "runs": [(f"runs: {k}", v) for k, v in (audit.get("runs") or {}).items()],
            "settings": sorted(settings.items()),
            "failures": list(audit.get("failures") or []),
            "retries": list(audit.get("retries") or []),
        }
        html = str(_environment().get_template("audit.html.j2").render(**context))
        return fill(html)
