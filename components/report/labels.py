"""Where a point's label goes on a chart: placed, not left to chance.

Each label tries the places around its point in turn (right first: the error bars are vertical) and
takes the first one that overlaps no other label, no marker and no edge of the plot, judged on a plot of
at least LABEL_PLOT pixels (smaller than any the app draws, so a label that fits there fits on screen).
Points closer than a marker share one label (`same_spot`).
"""

from __future__ import annotations

import math

LABEL_PLOT = (520, 260)  # (width, height) in pixels of the smallest plot area the labels are placed for
LABEL_FONT = 15  # px: presenter mode's point labels are the largest drawn
MARKER_PX = 14
PLACES = (
    "middle right",
    "middle left",
    "top right",
    "bottom right",
    "top left",
    "bottom left",
    "top center",
    "bottom center",
)


def label_box(place: str, x: float, y: float, text: str) -> tuple[float, float, float, float]:
    """(left, bottom, right, top) in pixels of `text` put at `place` around the point (x, y) in pixels."""
    w, h, gap = 0.62 * LABEL_FONT * len(text) + 2, LABEL_FONT * 1.25, MARKER_PX / 2 + 2
    vertical, horizontal = place.split(" ")
    if horizontal == "right":
        left = x + gap
    elif horizontal == "left":
        left = x - gap - w
    else:
        left = x - w / 2
    if vertical == "top":
        bottom = y + (gap if horizontal == "center" else 0)
    elif vertical == "bottom":
        bottom = y - h - (gap if horizontal == "center" else 0)
    else:
        bottom = y - h / 2
    return left, bottom, left + w, bottom + h


def overlap(a, b) -> float:
    """The area two boxes (left, bottom, right, top) share; 0 when they do not touch."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def place_labels(xs, ys, texts, x_range, y_range) -> list[str]:
    """A plotly textposition for each point (data coordinates, axis ranges), so that no two labels
    overlap each other, a marker or the plot's edge on a plot of LABEL_PLOT pixels (else the least
    overlap). Empty texts take no room."""
    (x0, x1), (y0, y1) = x_range, y_range
    width, height = LABEL_PLOT
    px = [(float(x) - x0) / ((x1 - x0) or 1) * width for x in xs]
    py = [(float(y) - y0) / ((y1 - y0) or 1) * height for y in ys]
    r = MARKER_PX / 2
    markers = [(x - r, y - r, x + r, y + r) for x, y in zip(px, py, strict=True)]
    taken: list[tuple] = []
    out = []
    for i, text in enumerate(texts):
        if not text:
            out.append("middle right")
            continue
        best, cost = PLACES[0], math.inf
        for place in PLACES:
            box = label_box(place, px[i], py[i], text)
            outside = (
                max(0.0, -box[0]) + max(0.0, box[2] - width) + max(0.0, -box[1]) + max(0.0, box[3] - height)
            ) * 100
            hit = sum(overlap(box, o) for o in taken) + sum(
                overlap(box, m) for j, m in enumerate(markers) if j != i
            )
            if outside + hit < cost:
                best, cost = place, outside + hit
            if cost == 0:
                break
        taken.append(label_box(best, px[i], py[i], text))
        out.append(best)
    return out


def same_spot(xs, ys, x_range, y_range) -> list[list[int]]:
    """Indices of points that fall on one spot (closer than a marker on a LABEL_PLOT plot), in order."""
    (x0, x1), (y0, y1) = x_range, y_range
    width, height = LABEL_PLOT
    pos = [
        ((float(x) - x0) / ((x1 - x0) or 1) * width, (float(y) - y0) / ((y1 - y0) or 1) * height)
        for x, y in zip(xs, ys, strict=True)
    ]
    groups: list[list[int]] = []
    for i, (x, y) in enumerate(pos):
        for g in groups:
            gx, gy = pos[g[0]]
            if abs(gx - x) < MARKER_PX * 0.75 and abs(gy - y) < MARKER_PX * 0.75:
                g.append(i)
                break
        else:
            groups.append([i])
    return groups
