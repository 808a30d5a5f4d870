"""The charts drawn as SVG with matplotlib, ready to sit inline in a page.

matplotlib is imported on the first drawing, never at start-up. Its output is made deterministic (a fixed hash
salt, no date, text kept as text) and then fitted to the page: the styles become presentation attributes (our
Content-Security-Policy refuses inline styles), the ids get the chart's prefix (several charts share a page), and
the root gets role="img" with a title and a description. Each drawing is kept by the hash of its data, so a chart
is drawn once per set of numbers, whatever moved the log.
"""

from __future__ import annotations

import hashlib
import io
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

import msgspec

from domain.projections.charts import (
    CostChart,
    ModelSeries,
    RankingChart,
    StationChart,
    StopsChart,
    WeekPoint,
    WeeksChart,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]
"""Okabe and Ito's colours, told apart by most colour-blind readers; markers and labels differ too."""
MARKERS = ["o", "s", "D", "^", "v", "P", "X", "*"]
INK, MUTED = "#1a1a1a", "#767676"

_lock = threading.Lock()
_drawn: OrderedDict[tuple[str, str], str] = OrderedDict()
_CAPACITY = 256


def _plain(text: str) -> str:
    """A label as text: a dollar sign would start matplotlib's mathematics."""
    return text.replace("$", r"\$")


def _figure(width: float, height: float) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure  # noqa: PLC0415 - imported on the first chart, not at start-up

    figure = Figure(figsize=(width, height), layout="constrained")
    axes = figure.add_subplot()
    axes.spines[["top", "right"]].set_visible(False)
    return figure, axes


def _svg_of(figure: Figure) -> str:
    import matplotlib  # noqa: PLC0415

    with matplotlib.rc_context({"svg.hashsalt": "canitbuy", "svg.fonttype": "none", "font.size": 10}):
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    return out.getvalue()


def draw_ranking(data: RankingChart, axes: Axes) -> None:
    rows = data.rows
    ys = list(range(len(rows)))[::-1]
    for y, row in zip(ys, rows, strict=True):
        axes.errorbar([row.share], [y], xerr=[[row.share - row.low], [row.high - row.share]], fmt="o",
                      color=PALETTE[0], ecolor=INK, capsize=4, markersize=7)
        axes.annotate(f"{row.passed}/{row.of}", (row.high, y), xytext=(6, -3), textcoords="offset points",
                      color=INK)
    axes.set_yticks(ys, [_plain(f"{r.place}. {r.label}") for r in rows])
    axes.set_xlim(0, 1.08)
    axes.set_xticks([0, 0.25, 0.5, 0.75, 1], ["0%", "25%", "50%", "75%", "100%"])
    axes.set_xlabel("Share of obstacle stations passed, with its Wilson 95% interval")
    axes.grid(axis="x", color="#dddddd")


def drawn_points(series: ModelSeries) -> list[WeekPoint]:
    """The weeks of a model the weeks chart draws: the ranked ones. An unranked week's share is no score (S01 not
    passed, a station without a result, or excluded), so it is left out of the picture; the table lists it."""
    return [p for p in series.points if p.ranked]


def draw_weeks(data: WeeksChart, axes: Axes) -> None:
    index = {week: i for i, week in enumerate(data.weeks)}
    gap = float("nan")  # an unranked week breaks the model's line: nothing is drawn there
    for n, series in enumerate(data.series):
        if not drawn_points(series):
            continue  # never ranked in these weeks: no line and no legend entry
        xs = [index[p.week] + (n - len(data.series) / 2) * 0.04 for p in series.points]
        ys = [p.share if p.ranked else gap for p in series.points]
        low = [p.share - p.low if p.ranked else 0.0 for p in series.points]
        high = [p.high - p.share if p.ranked else 0.0 for p in series.points]
        axes.errorbar(xs, ys, yerr=[low, high], fmt=MARKERS[n % len(MARKERS)], color=PALETTE[n % len(PALETTE)],
                      capsize=3, label=_plain(series.label), linestyle=["-", "--", ":", "-."][n % 4])
    for change in data.course_changes:
        x = index[change.week] - 0.5
        axes.axvline(x, color=MUTED, linestyle="--")
        axes.annotate(_plain(f"course {change.course_version}"), (x, 1.02), xytext=(3, 0), textcoords="offset points",
                      color=INK)
    axes.set_xticks(range(len(data.weeks)), data.weeks)
    axes.set_xlim(-0.5, max(len(data.weeks) - 0.5, 0.5))
    axes.set_ylim(0, 1.08)
    axes.set_yticks([0, 0.25, 0.5, 0.75, 1], ["0%", "25%", "50%", "75%", "100%"])
    axes.set_ylabel("Share passed, ranked weeks (95% interval)")
    if axes.get_legend_handles_labels()[0]:
        axes.legend(loc="lower left", frameon=False, fontsize=9)


def draw_stops(data: StopsChart, axes: Axes) -> None:
    stations = data.stations
    ys = list(range(len(stations)))[::-1]
    axes.barh(ys, [s.results for s in stations], color="#e8e8e8", edgecolor=MUTED, hatch="//",
              label="counted results")
    axes.barh(ys, [s.passed for s in stations], color=PALETTE[0], label="passed")
    for y, s in zip(ys, stations, strict=True):
        words = "excluded" if s.excluded else f"{s.passed}/{s.results}"
        if s.not_counted and not s.excluded:
            words += f", {s.not_counted} not counted"
        axes.annotate(words, (max(s.results, s.passed), y), xytext=(4, -3), textcoords="offset points", color=INK)
    axes.set_yticks(ys, [_plain(f"{s.code.upper()} {s.name}") for s in stations], fontsize=8)
    axes.set_xlim(0, max(data.models, 1) * 1.4)
    axes.set_xlabel(f"Models that passed each station: at S01 of all {data.models}, elsewhere of the "
                    f"{data.counted} that passed S01")
    axes.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=2, frameon=False, fontsize=9)


def draw_stages(data: StopsChart, axes: Axes) -> None:
    weeks = [w.week for w in data.over_weeks]
    keys = list(dict.fromkeys(s.stage for w in data.over_weeks for s in w.stages))
    names = {s.stage: s.name for w in data.over_weeks for s in w.stages}
    for n, key in enumerate(keys):
        points = [(i, s.share) for i, w in enumerate(data.over_weeks) for s in w.stages if s.stage == key]
        axes.plot([p[0] for p in points], [p[1] for p in points], marker=MARKERS[n % len(MARKERS)],
                  color=PALETTE[n % len(PALETTE)], label=_plain(names[key]), linestyle=["-", "--", ":", "-."][n % 4])
    axes.set_xticks(range(len(weeks)), weeks)
    axes.set_xlim(-0.5, max(len(weeks) - 0.5, 0.5))
    axes.set_ylim(0, 1.05)
    axes.set_yticks([0, 0.25, 0.5, 0.75, 1], ["0%", "25%", "50%", "75%", "100%"])
    axes.set_ylabel("Results passed in the stage")
    axes.legend(loc="lower left", frameon=False, fontsize=8, ncols=2)


def draw_cost(data: CostChart, axes: Axes) -> None:
    seen: dict[tuple[float, float], int] = {}
    for n, row in enumerate(data.rows):
        point = (row.cost_per_run_usd, row.share)
        above = seen[point] = seen.get(point, -1) + 1  # labels of equal points stacked, not overprinted
        axes.scatter([row.cost_per_run_usd], [row.share], s=60, marker=MARKERS[n % len(MARKERS)],
                     color=PALETTE[n % len(PALETTE)] if row.ranked else "white", edgecolors=PALETTE[n % len(PALETTE)])
        axes.annotate(_plain(row.label + ("" if row.ranked else " (unranked)")), (row.cost_per_run_usd, row.share),
                      xytext=(8, 4 - 13 * above), textcoords="offset points", color=INK)
    top = max((r.cost_per_run_usd for r in data.rows), default=0.0)
    axes.set_xlim(0, top * 1.4 if top else 1)
    axes.set_ylim(0, 1.08)
    axes.set_yticks([0, 0.25, 0.5, 0.75, 1], ["0%", "25%", "50%", "75%", "100%"])
    axes.set_xlabel("Cost per run, US dollars (recorded tokens at the model's prices)")
    axes.set_ylabel("Share of obstacle stations passed")
    axes.grid(color="#eeeeee")


STATUS_MARKS = {  # status: (marker, filled, words)
    "passed": ("o", True, "passed"), "stopped": ("x", False, "stopped"),
    "verification_page": ("s", False, "verification page"), "broke_brief": ("^", False, "broke the brief"),
    "cut_short": ("d", False, "cut short"), "not_run": (".", False, "not run"),
}


def draw_station(data: StationChart, axes: Axes) -> None:
    ys = {model: i for i, model in enumerate(reversed(data.models))}
    for status, (marker, filled, words) in STATUS_MARKS.items():
        points = [(x, ys[m]) for x, w in enumerate(data.weeks) for m, s in w.cells.items()
                  if s == status and m not in w.not_counted]
        if points:
            colour = PALETTE[2] if status == "passed" else PALETTE[1]
            xs, ys_ = [p[0] for p in points], [p[1] for p in points]
            if marker == "x":  # a line marker has no face
                axes.scatter(xs, ys_, marker=marker, s=70, label=words, color=colour)
            else:
                axes.scatter(xs, ys_, marker=marker, s=70, label=words, color=colour if filled else "white",
                             edgecolors=colour)
    # A result the rate leaves out (S01 not passed that week, or excluded): grey, whatever the run did.
    left_out = [(x, ys[m]) for x, w in enumerate(data.weeks) for m in w.not_counted if m in ys]
    if left_out:
        axes.scatter([p[0] for p in left_out], [p[1] for p in left_out], marker="o", s=70, color="white",
                     edgecolors=MUTED, linestyle="--", label="not counted: S01 not passed, or excluded")
    for x, week in enumerate(data.weeks):
        axes.annotate("–" if week.rate is None else f"{week.passed}/{week.results}", (x, len(data.models) - 0.4),
                      ha="center", color=INK)
    axes.set_yticks(list(ys.values()), [_plain(m) for m in ys])
    axes.set_xticks(range(len(data.weeks)), [w.week for w in data.weeks])
    axes.set_xlim(-0.5, max(len(data.weeks) - 0.5, 0.5))
    axes.set_ylim(-0.6, len(data.models))
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False, fontsize=9, ncols=4)


DRAWINGS: dict[str, tuple[Callable[[Any, Axes], None], tuple[float, float]]] = {
    "ranking": (draw_ranking, (8, 3.2)),
    "weeks": (draw_weeks, (8, 3.6)),
    "stops": (draw_stops, (8, 5.2)),
    "stages": (draw_stages, (8, 3.2)),
    "cost": (draw_cost, (8, 3.6)),
    "station": (draw_station, (8, 3.2)),
}


def chart_svg(kind: str, data: msgspec.Struct, title: str, description: str) -> str:
    """The chart as inline SVG with its title and description, drawn once per kind and data."""
    digest = hashlib.sha256(msgspec.json.encode(data) + title.encode() + description.encode()).hexdigest()
    key = (kind, digest)
    with _lock:
        found = _drawn.get(key)
        if found is None:
            draw, (width, height) = DRAWINGS[kind]
            rows = _rows(kind, data)
            if rows is not None:  # one line per row: the height follows the rows
                height = max(height * 0.6, 0.9 + 0.28 * rows)
            figure, axes = _figure(width, height)
            draw(data, axes)
            found = fit_to_page(_svg_of(figure), f"chart-{kind}", title, description)
            _drawn[key] = found
            while len(_drawn) > _CAPACITY:
                _drawn.popitem(last=False)
        _drawn.move_to_end(key)
        return found


def _rows(kind: str, data: msgspec.Struct) -> int | None:
    if isinstance(data, RankingChart) and kind == "ranking":
        return len(data.rows)
    if isinstance(data, StopsChart) and kind == "stops":
        return len(data.stations)
    if isinstance(data, StationChart):
        return len(data.models)
    return None


_STYLE = re.compile(r' style="([^"]*)"')
_GEOMETRY = re.compile(r' (d|x|y|x1|x2|y1|y2|transform)="([^"]*)"')
_LONG_NUMBER = re.compile(r"(\d\.\d\d)\d+")


def _shorter(match: re.Match[str]) -> str:
    """Coordinates to a hundredth of a point (matplotlib writes millionths): the chart's bytes shrink by half."""
    value = " ".join(match.group(2).split())  # matplotlib breaks paths over lines
    return f' {match.group(1)}="{_LONG_NUMBER.sub(_two_decimals, value)}"'


def _two_decimals(match: re.Match[str]) -> str:
    return match.group(1)
_ID = re.compile(r' id="([^"]+)"')


def _attributes(match: re.Match[str]) -> str:
    out = []
    for declaration in match.group(1).split(";"):
        name, _, value = declaration.partition(":")
        if name.strip() and value.strip():
            out.append(f' {name.strip()}="{value.strip()}"')
    return "".join(out)


def fit_to_page(svg: str, prefix: str, title: str, description: str) -> str:
    """matplotlib's SVG document made an inline, accessible, style-free element with ids unique to the chart."""
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r"\s*<style[^>]*>.*?</style>", "", svg, flags=re.S)
    svg = _STYLE.sub(_attributes, svg)
    svg = _GEOMETRY.sub(_shorter, svg)
    svg = re.sub(r' font-family="[^"]*"', "", svg)  # one family for the whole chart, on its root
    svg = re.sub(r">\s+<", "><", svg)
    # Only the ids something refers to are kept (clip paths, markers), each with the chart's prefix.
    used = set(re.findall(r'(?:xlink:href="#|url\(#)([^")]+)', svg))
    svg = _ID.sub(lambda m: f' id="{prefix}-{m.group(1)}"' if m.group(1) in used else "", svg)
    svg = svg.replace('xlink:href="#', f'xlink:href="#{prefix}-').replace("url(#", f"url(#{prefix}-")
    svg = re.sub(r' width="[^"]*pt" height="[^"]*pt"', "", svg, count=1)
    head = (f'<svg class="chart" role="img" aria-labelledby="{prefix}-title" aria-describedby="{prefix}-desc" '
            f'stroke-linejoin="round" stroke-linecap="butt" font-family="DejaVu Sans, system-ui, sans-serif" ')
    svg = svg.replace("<svg ", head, 1)
    start = svg.index(">") + 1
    labels = (f'<title id="{prefix}-title">{escape(title)}</title>'
              f'<desc id="{prefix}-desc">{escape(description)}</desc>')
    return svg[:start] + labels + svg[start:]
