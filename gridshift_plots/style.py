"""What every gridshift figure shares: a distinct colour and marker per series (a declared table of 20),
labels placed at the ends of lines instead of a legend, readable date axes, a deterministic atomic PNG save,
and a check that no two labels overlap.

Matplotlib's object API on the Agg canvas (no pyplot state, no display). Same inputs give the same
bytes with the same matplotlib version: fixed size and dpi, no time stamp or version in the PNG.
"""

from __future__ import annotations

import io
from itertools import combinations
from pathlib import Path

from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.text import Text

from gridshift.atomic import atomic_write_bytes

DPI = 110
#: filled markers that stay distinguishable at 5-8 pt; 7 is coprime with the 10 qualitative colours, so
#: (colour i mod 10, marker i mod 7) repeats only after 70 series
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
#: The declared styles of up to 24 series: 24 colours readable on white, no two alike (CIELAB distance
#: >= 25: tab10, then 14 darker or stronger hues, the last four CSS blue, fuchsia, blueviolet and tan, each
#: the farthest left from those before it), each with its own marker among 12 (a colour-blind reader
#: or a grey print still tells them apart by the marker, 12 apart).
PALETTE = tuple(zip(
    ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
     "#0b2e6f", "#800000", "#1b9e77", "#c51b7d", "#a6761d", "#556b2f", "#e6ab02", "#3f007d", "#fb8072", "#2f4f4f",
     "#0000ff", "#ff00ff", "#8a2be2", "#d2b48c"),
    ("o", "s", "^", "D", "v", "P", "X", "*", "h", "p", "<", ">") * 2, strict=False))
_PNG_META = {"Software": None}  # no matplotlib version string: identical bytes across patch releases


def palette_style(i: int) -> dict:
    """Entry ``i`` of :data:`PALETTE` as plot keywords (``color``, ``marker``)."""
    color, marker = PALETTE[i]
    return {"color": color, "marker": marker}


def series_styles(n: int) -> list[dict]:
    """``n`` (colour, marker) pairs, pairwise distinct for any ``n``: :data:`PALETTE` up to 24 series (every
    colour distinct), tab10 colours x :data:`MARKERS` up to 70, evenly spaced hues beyond (every colour then
    distinct)."""
    if n <= len(PALETTE):
        return [palette_style(i) for i in range(n)]
    if n <= 10 * len(MARKERS):
        cmap = colormaps["tab10"]
        return [{"color": cmap(i % 10), "marker": MARKERS[i % len(MARKERS)]} for i in range(n)]
    cmap = colormaps["hsv"]
    return [{"color": cmap(i / n), "marker": MARKERS[i % len(MARKERS)]} for i in range(n)]


def spread(ys: list[float], gap: float, lo: float, hi: float) -> list[float]:
    """Positions for labels wanted at ``ys`` (sorted ascending): in the same order, at least ``gap`` apart,
    each group of labels that must move centred on where its members want to be (least squares), then kept
    within ``lo`` .. ``hi`` where there is room."""
    groups: list[list[float]] = []  # [first index, count, centre]
    for i, y in enumerate(ys):
        groups.append([i, 1, y])
        while len(groups) > 1:
            (ia, na, ca), (_, nb, cb) = groups[-2], groups[-1]
            if (cb - (nb - 1) * gap / 2) - (ca + (na - 1) * gap / 2) >= gap:
                break
            groups[-2:] = [[ia, na + nb, (ca * na + cb * nb) / (na + nb)]]
    out = [c + (k - (n - 1) / 2) * gap for _, n, c in groups for k in range(n)]
    for i in range(len(out)):  # up from the floor, then down from the ceiling
        out[i] = max(out[i], lo if i == 0 else out[i - 1] + gap)
    for i in reversed(range(len(out))):
        out[i] = min(out[i], hi if i == len(out) - 1 else out[i + 1] - gap)
    return out


def direct_labels(ax, ends: list[tuple[str, float, float, object]], fontsize: float = 7) -> list[Text]:
    """Label each line at its right end instead of a legend: ``ends`` are (label, x, y, colour) of the lines'
    last points (data coordinates). The labels stand in the right margin, in the lines' order, spread
    (:func:`spread`) so that none overlaps another, each joined to its line's end by a thin leader in its
    colour. Call once the axes' limits and the layout are final (the labels are outside the layout: leave
    the figure room on the right)."""
    fig = ax.figure
    FigureCanvasAgg(fig)
    fig.draw_without_rendering()  # the final axes position and limits
    to_axes = ax.transData + ax.transAxes.inverted()
    pts = sorted(((label, *to_axes.transform((x, y)), color) for label, x, y, color in ends), key=lambda e: e[2])
    height_px = ax.get_window_extent().height
    gap = fontsize * fig.dpi / 72 * 1.3 / height_px  # a line of text, in axes fractions
    room = (fig.bbox.y1 - ax.get_window_extent().y1) / height_px  # above the axes, to the figure's top
    below = (ax.get_window_extent().y0 - fig.bbox.y0) / height_px
    placed = spread([e[2] for e in pts], gap, -below + gap, 1 + room - gap)
    texts = []
    for (label, xa, ya, color), y in zip(pts, placed, strict=True):
        ax.plot([xa, 1.02, 1.05], [ya, ya, y], transform=ax.transAxes, clip_on=False, color=color, lw=0.6,
                alpha=0.7)
        texts.append(ax.text(1.055, y, label, transform=ax.transAxes, fontsize=fontsize, color=color,
                             va="center", ha="left", clip_on=False))
    return texts


def date_axis(ax) -> None:
    """Concise date ticks (year and month once, then days or hours) that do not collide."""
    locator = AutoDateLocator(minticks=3, maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))


def save_png(fig: Figure, path: Path) -> Path:
    """Render ``fig`` to PNG bytes and write them atomically to ``path``."""
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata=_PNG_META)
    atomic_write_bytes(Path(path), buf.getvalue())
    return Path(path)


def _drawn_tick_labels(ax) -> tuple[list[Text], set[int]]:
    """The tick labels drawn on ``ax`` (a tick outside the view keeps a label that is never drawn), and
    the ids of all its tick labels."""
    drawn, every = [], set()
    for axis in (ax.xaxis, ax.yaxis):
        lo, hi = sorted(axis.get_view_interval())
        span = (hi - lo) * 1e-9
        for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
            labels = (tick.label1, tick.label2)
            every.update(id(t) for t in labels)
            if lo - span <= tick.get_loc() <= hi + span and tick.get_visible():
                drawn += [t for t in labels if t.get_visible() and t.get_text().strip()]
    return drawn, every


def _visible_texts(fig: Figure) -> list[Text]:
    """Every text drawn on ``fig``: titles, axis labels, drawn tick labels, legends, annotations."""
    ticks, tick_ids = [], set()
    for ax in fig.axes:
        if ax.get_visible():
            drawn, every = _drawn_tick_labels(ax)
            ticks += drawn
            tick_ids |= every
    other = [t for t in fig.findobj(Text) if id(t) not in tick_ids and t.get_visible() and t.get_text().strip()
             and (t.axes is None or t.axes.get_visible())]
    return other + ticks


def overlapping_labels(fig: Figure) -> list[tuple[str, str]]:
    """Pairs of visible texts (titles, axis and tick labels, legend entries, annotations) whose drawn
    boxes overlap, and texts that fall outside the figure, as ``(text, text)`` / ``(text, "<outside>")``.
    Empty for a readable figure."""
    FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in _visible_texts(fig)]
    page = fig.bbox
    bad = [(a, "<outside>") for a, b in boxes
           if b.x0 < page.x0 - 1 or b.y0 < page.y0 - 1 or b.x1 > page.x1 + 1 or b.y1 > page.y1 + 1]
    bad += [(a, c) for (a, b), (c, d) in combinations(boxes, 2) if b.overlaps(d) and b.width and d.width]
    return bad


def legend_labels(fig: Figure) -> list[str]:
    """The labels of every legend in ``fig``, in order."""
    return [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()] + \
           [t.get_text() for leg in fig.legends for t in leg.get_texts()]
