"""Charts drawn as SVG on the server for the Overview page: no script, no remote content,
styled by class names from the page's stylesheet (the CSP forbids ``style`` attributes and
elements), every label escaped. Each chart goes beside a table of the same numbers (the
template's), for screen readers and copying; the picture itself is one ``role="img"`` with
a title.

Three shapes: horizontal bars (a count per label), columns over days (one count per day),
and stacked columns over days (a count per kind each day, with a legend).
pygal was considered: it writes its styles into the SVG as a ``<style>`` element, which the
page's ``style-src 'self'`` refuses, so the few shapes needed are drawn here.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

MAX_LABEL = 28
_BAR_H, _BAR_GAP, _LABEL_W, _BAR_W, _PAD = 18, 6, 190, 320, 8
_COL_W, _COL_GAP, _PLOT_H, _AXIS_H, _LEGEND_H = 14, 4, 140, 34, 20


def _short(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "\u2026"


def _class(kind: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in kind.lower())[:32] or "other"


def _open(width: int, height: int, title: str, name: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart chart-{_class(name)}" '
        f'role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
        f"<title>{escape(title)}</title>",
    ]


def bars(rows: Sequence[tuple[str, int, str]], *, title: str, name: str) -> Markup:
    """One horizontal bar per ``(label, count, kind)`` (``kind``: a CSS class suffix), its
    length in proportion to the largest count, the count written after it."""
    largest = max((count for _, count, _ in rows), default=0) or 1
    width = _PAD * 2 + _LABEL_W + _BAR_W + 60
    height = _PAD * 2 + max(1, len(rows)) * (_BAR_H + _BAR_GAP) - _BAR_GAP
    parts = _open(width, height, title, name)
    for index, (label, count, kind) in enumerate(rows):
        y = _PAD + index * (_BAR_H + _BAR_GAP)
        length = round(_BAR_W * count / largest)
        parts.append(
            f'<g class="bar bar-{_class(kind)}"><title>{escape(label)}: {count}</title>'
            f'<text class="label" x="{_PAD + _LABEL_W - 6}" y="{y + 13}" text-anchor="end">'
            f"{escape(_short(label))}</text>"
            f'<rect x="{_PAD + _LABEL_W}" y="{y}" width="{max(length, 1 if count else 0)}" '
            f'height="{_BAR_H}"/>'
            f'<text class="value" x="{_PAD + _LABEL_W + length + 6}" y="{y + 13}">{count}</text>'
            "</g>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _value_axis(left: int, base: int, width: int, largest: int) -> str:
    """The column charts' value axis: the largest count at the top, 0 on the baseline."""
    return (
        f'<text class="axis" x="{left - 6}" y="{_PAD + 10}" text-anchor="end">{largest}</text>'
        f'<text class="axis" x="{left - 6}" y="{base}" text-anchor="end">0</text>'
        f'<line class="baseline" x1="{left}" y1="{base}" x2="{width - _PAD}" y2="{base}"/>'
    )


def columns(points: Sequence[tuple[str, int]], *, title: str, name: str) -> Markup:
    """One column per ``(day, count)``, oldest first; the first and last day and the largest
    count are written on the axes."""
    largest = max((count for _, count in points), default=0)
    scale = largest or 1
    width = _PAD * 2 + 40 + max(1, len(points)) * (_COL_W + _COL_GAP)
    height = _PAD * 2 + _PLOT_H + _AXIS_H
    base = _PAD + _PLOT_H
    left = _PAD + 40
    parts = _open(width, height, title, name)
    parts.append(_value_axis(left, base, width, largest))
    for index, (day, count) in enumerate(points):
        x = left + index * (_COL_W + _COL_GAP)
        tall = round(_PLOT_H * count / scale)
        parts.append(
            f'<g class="column"><title>{escape(day)}: {count}</title>'
            f'<rect x="{x}" y="{base - tall}" width="{_COL_W}" height="{tall}"/></g>'
        )
    if points:
        last_x = left + (len(points) - 1) * (_COL_W + _COL_GAP) + _COL_W
        parts.append(
            f'<text class="axis" x="{left}" y="{base + 18}">{escape(points[0][0])}</text>'
            f'<text class="axis" x="{last_x}" y="{base + 18}" text-anchor="end">'
            f"{escape(points[-1][0])}</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def stacked(
    points: Sequence[tuple[str, Sequence[tuple[str, int]]]], *, title: str, name: str
) -> Markup:
    """One column per ``(day, [(kind, count), ...])``, oldest first, its segments stacked in
    the order of the kinds (each classed ``seg-KIND``); the largest day's total and the first
    and last day on the axes, and a legend of the kinds under them."""
    totals = [sum(count for _, count in kinds) for _, kinds in points]
    largest = max(totals, default=0)
    scale = largest or 1
    kinds = [kind for kind, _ in points[0][1]] if points else []
    width = max(_PAD * 2 + 40 + max(1, len(points)) * (_COL_W + _COL_GAP), 90 * len(kinds))
    height = _PAD * 2 + _PLOT_H + _AXIS_H + _LEGEND_H
    base = _PAD + _PLOT_H
    left = _PAD + 40
    parts = _open(width, height, title, name)
    parts.append(_value_axis(left, base, width, largest))
    for index, (day, counts) in enumerate(points):
        x = left + index * (_COL_W + _COL_GAP)
        said = ", ".join(f"{kind} {count}" for kind, count in counts)
        parts.append(f'<g class="column stack"><title>{escape(day)}: {escape(said)}</title>')
        # Each segment's top is the running total's, rounded, so the segments meet exactly.
        below = 0
        for kind, count in counts:
            low = round(_PLOT_H * below / scale)
            below += count
            high = round(_PLOT_H * below / scale)
            if high > low:
                parts.append(
                    f'<rect class="seg seg-{_class(kind)}" x="{x}" y="{base - high}" '
                    f'width="{_COL_W}" height="{high - low}"/>'
                )
        parts.append("</g>")
    if points:
        last_x = left + (len(points) - 1) * (_COL_W + _COL_GAP) + _COL_W
        parts.append(
            f'<text class="axis" x="{left}" y="{base + 18}">{escape(points[0][0])}</text>'
            f'<text class="axis" x="{last_x}" y="{base + 18}" text-anchor="end">'
            f"{escape(points[-1][0])}</text>"
        )
    legend_y = base + _AXIS_H
    for index, kind in enumerate(kinds):
        x = _PAD + index * 88
        parts.append(
            f'<g class="legend"><rect class="seg seg-{_class(kind)}" x="{x}" y="{legend_y}" '
            f'width="12" height="12"/><text x="{x + 16}" y="{legend_y + 11}">'
            f"{escape(_short(kind))}</text></g>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))
