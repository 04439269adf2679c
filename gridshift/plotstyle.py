"""What every gridshift figure shares: a distinct colour and marker per series, readable date axes, a
deterministic atomic PNG save, and a check that no two labels overlap.

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
_PNG_META = {"Software": None}  # no matplotlib version string: identical bytes across patch releases


def series_styles(n: int) -> list[dict]:
    """``n`` (colour, marker) pairs, pairwise distinct for any ``n``: tab10 colours x :data:`MARKERS` up
    to 70 series, evenly spaced hues beyond (every colour then distinct)."""
    if n <= 10 * len(MARKERS):
        cmap = colormaps["tab10"]
        return [{"color": cmap(i % 10), "marker": MARKERS[i % len(MARKERS)]} for i in range(n)]
    cmap = colormaps["hsv"]
    return [{"color": cmap(i / n), "marker": MARKERS[i % len(MARKERS)]} for i in range(n)]


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
