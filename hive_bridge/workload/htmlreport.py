"""A replayed workload as one self-contained HTML page (``hive-bridge replay … --html report.html``): it opens
offline, every script and style inlined (Bokeh's own JavaScript, ``bokeh.resources``' inline mode).

Sections: totals; per table the bytes Spark read beside what hive-bridge keeps (and Hudi's own data skipping
where the log has it); what could not be read; the costliest filters of each table (bytes kept × occurrences,
the top ones, with how many are left out); per column how often it is filtered on and how well it prunes; per
table a heat map of the partitions and files the workload reads; and the layout advisor's what-if charts,
drawn from what :class:`LayoutAdvice` says of a table (the advisor's ``Advice`` is one) so that this layer
needs nothing of the advisor itself. Every text taken from logs is escaped; URIs are redacted."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from bokeh.document import Document
from bokeh.embed import components
from bokeh.models import (
    BasicTicker,
    BoxZoomTool,
    ColumnDataSource,
    CustomJSHover,
    FactorRange,
    FixedTicker,
    HoverTool,
    LinearColorMapper,
    NumeralTickFormatter,
    Range1d,
)
from bokeh.models.annotations import ColorBar, TeeHead, Title, Whisker
from bokeh.plotting import figure
from bokeh.resources import Resources
from bokeh.transform import dodge

from hive_bridge.redaction import redact, redact_data
from hive_bridge.workload.eventlog import Problem
from hive_bridge.workload.formatting import human_bytes
from hive_bridge.workload.insights import TOP_FILTERS, workload_insights
from hive_bridge.workload.runner import Workload


class LayoutEstimate(Protocol):
    """One candidate layout's predicted reads for a table's workload (totals over its occurrences; mean, low and
    high over the samples) and its saving over today's layout (a fraction; negative: it reads more)."""

    @property
    def layout(self) -> str: ...
    @property
    def files_read(self) -> float: ...
    @property
    def bytes_read(self) -> float: ...
    @property
    def bytes_low(self) -> float: ...
    @property
    def bytes_high(self) -> float: ...
    @property
    def saving(self) -> float: ...


class LayoutAdvice(Protocol):
    """What the page shows of the layout advisor's advice for one table: the table (its URI), the sampling, the
    candidates, the recommended one (``{"layout": str, "saving": float, "settings": {str: str}}``, or None) and
    notes."""

    @property
    def table(self) -> str: ...
    @property
    def sample_rows(self) -> int: ...
    @property
    def samples(self) -> int: ...
    @property
    def target_file_bytes(self) -> int: ...
    @property
    def filters(self) -> int: ...
    @property
    def candidates(self) -> Sequence[LayoutEstimate]: ...
    @property
    def recommended(self) -> Mapping[str, Any] | None: ...
    @property
    def notes(self) -> Sequence[str]: ...


def _advice_data(advice: LayoutAdvice) -> dict[str, Any]:
    """The advice as plain data, for redaction and drawing."""
    return {"table": advice.table, "sample_rows": advice.sample_rows, "samples": advice.samples,
            "target_file_bytes": advice.target_file_bytes, "filters": advice.filters,
            "candidates": [{"layout": c.layout, "files_read": c.files_read, "bytes_read": c.bytes_read,
                            "bytes_low": c.bytes_low, "bytes_high": c.bytes_high, "saving": c.saving}
                           for c in advice.candidates],
            "recommended": dict(advice.recommended) if advice.recommended is not None else None,
            "notes": list(advice.notes), "warnings": list(getattr(advice, "warnings", ()))}


#: tables drawn in the overview chart (the largest by bytes; every table is in the table beside it)
CHART_TABLES = 20
#: (table, column) pairs drawn in the columns chart
CHART_COLUMNS = 25
#: tables whose filters and columns are shown unfolded (the others' fold open with a click)
OPEN_TABLES = 5
#: how to get the advisor's figures when the report has none
ADVISE_COMMAND = "hive-bridge advise --table URI LOGS…"
HEAT_PALETTE = ("#ffffcc", "#ffeda0", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#bd0026", "#800026")
PRUNE_PALETTE = ("#1a9850", "#66bd63", "#a6d96a", "#d9ef8b", "#fee08b", "#fdae61", "#f46d43", "#d73027")
TOOLS = "pan,wheel_zoom,box_zoom,reset,save"

e = html.escape


def _n(count: int, noun: str) -> str:
    """``1 filter``, ``2 filters``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _short(uri: str, i: int) -> str:
    """A table's chart label: its number and last path component."""
    return f"{i}. {uri.rstrip('/').rsplit('/', 1)[-1] or uri}"


def _unit(largest: float) -> tuple[str, float]:
    """The byte unit an axis reaching ``largest`` is labelled in, and its size."""
    for unit, size in (("TiB", 1024.0 ** 4), ("GiB", 1024.0 ** 3), ("MiB", 1024.0 ** 2), ("KiB", 1024.0)):
        if largest >= size:
            return unit, size
    return "bytes", 1.0


def _fig(**kw: Any) -> Any:
    f = figure(tools=TOOLS, toolbar_location="right", sizing_mode="stretch_width", **kw)
    f.toolbar.logo = None
    if isinstance(f.title, Title):
        f.title.text_font_size = "13px"
    return f


# ---- charts -------------------------------------------------------------------------------------------------

def bytes_chart(tables: list[dict[str, Any]]) -> Any | None:
    """Per table (the largest ``CHART_TABLES``): bytes with no pruning and kept by hive-bridge over all scans,
    and Spark's read beside hive-bridge's for the scans Spark measured."""
    opened = [(i, t) for i, t in enumerate(tables, start=1) if "error" not in t]
    opened.sort(key=lambda it: -max(it[1]["bytes_unpruned"], it[1]["spark_bytes_read"]))
    rows = opened[:CHART_TABLES]
    if not rows:
        return None
    title = "Bytes read per table" + (f" (the {len(rows)} largest of {len(opened)})" if len(opened) > len(rows)
                                      else "")
    series = [("bytes_unpruned", "no pruning, all scans", "#bdbdbd"),
              ("hive_bridge_bytes_kept", "hive-bridge keeps, all scans", "#2171b5"),
              ("spark_bytes_read", "Spark read, measured scans", "#fd8d3c"),
              ("hive_bridge_bytes_kept_measured", "hive-bridge keeps, measured scans", "#6baed6")]
    labels = [_short(t["table"], i) for i, t in rows]
    unit, size = _unit(max(t[key] for _, t in rows for key, _, _ in series))
    data: dict[str, list[Any]] = {"label": labels, "table": [t["table"] for _, t in rows],
                                  "scans": [t["scans"] for _, t in rows],
                                  "measured": [t["spark_scans_measured"] for _, t in rows]}
    for key, _, _ in series:
        data[key] = [t[key] / size for _, t in rows]
        data[key + "_h"] = [human_bytes(t[key]) for _, t in rows]
    src = ColumnDataSource(data)
    f = _fig(y_range=FactorRange(factors=list(reversed(labels))), height=120 + 4 * 13 * len(rows),
             title=title)
    step = 0.2
    for k, (key, name, color) in enumerate(series):
        f.hbar(y=dodge("label", (1.5 - k) * step, range=f.y_range), right=key, height=step * 0.9, source=src,
               color=color, legend_label=name)
    f.xaxis.axis_label = unit
    f.x_range.start = 0
    legend = f.legend[0]
    legend.orientation = "horizontal"
    legend.label_text_font_size = "11px"
    f.add_layout(legend, "above")
    f.add_tools(HoverTool(tooltips=[("table", "@table"), ("scans", "@scans (@measured measured by Spark)"),
                                    ("no pruning", "@bytes_unpruned_h"), ("hive-bridge", "@hive_bridge_bytes_kept_h"),
                                    ("Spark read", "@spark_bytes_read_h"),
                                    ("hive-bridge, same scans", "@hive_bridge_bytes_kept_measured_h")]))
    return f


def columns_chart(tables: list[dict[str, Any]]) -> Any | None:
    """The columns filtered on most over all tables: occurrences, coloured by the fraction of files kept."""
    rows = [(i, t, c) for i, t in enumerate(tables, start=1) for c in t.get("columns", ())]
    rows.sort(key=lambda r: -r[2]["occurrences"])
    rows = rows[:CHART_COLUMNS]
    if not rows:
        return None
    labels = [f"{c['column']} ({_short(t['table'], i)})" for i, t, c in rows]
    src = ColumnDataSource({
        "label": labels, "occurrences": [c["occurrences"] for _, _, c in rows],
        "filters": [c["filters"] for _, _, c in rows], "kept": [c["kept_files"] for _, _, c in rows],
        "kept_h": [_pct(c["kept_files"]) for _, _, c in rows],
        "alone_h": [_pct(c["alone_kept_files"]) for _, _, c in rows],
        "table": [t["table"] for _, t, _ in rows]})
    mapper = LinearColorMapper(palette=list(PRUNE_PALETTE), low=0.0, high=1.0)
    f = _fig(y_range=FactorRange(factors=list(reversed(labels))), height=70 + 20 * len(rows),
             title="Columns filtered on most (colour: mean fraction of files kept; green prunes well)")
    f.hbar(y="label", right="occurrences", height=0.75, source=src,
           fill_color={"field": "kept", "transform": mapper}, line_color=None)
    f.x_range.start = 0
    f.add_layout(ColorBar(color_mapper=mapper, width=10, formatter=NumeralTickFormatter(format="0%")), "right")
    f.add_tools(HoverTool(tooltips=[("column", "@label"), ("table", "@table"), ("occurrences", "@occurrences"),
                                    ("distinct filters", "@filters"), ("files kept (mean)", "@kept_h"),
                                    ("files kept, alone", "@alone_h")]))
    return f


def heat_chart(heat: dict[str, Any], title: str) -> Any | None:
    """A table's reads: rows of partitions (or runs of files), cells of runs of files, coloured by the mean
    reads per file (grey: never read). Rows are numbers on the axis, named by its labels and the tooltip."""
    cells = heat["cells"]
    if not cells["x"]:
        return None
    rows = heat["rows"]
    src = ColumnDataSource(dict(cells))
    # a file never read (0) is below the scale's low end: grey
    mapper = LinearColorMapper(palette=list(HEAT_PALETTE), low=1e-9, high=max(max(cells["mean"]), 1.0),
                               low_color="#d9d9d9")
    f = _fig(y_range=Range1d(start=len(rows) - 0.5, end=-0.5),
             x_range=Range1d(start=-0.5, end=max(heat["columns"], 1) - 0.5),
             height=max(170, 80 + 20 * len(rows)), title=title)
    f.tools = [t for t in f.tools if not isinstance(t, BoxZoomTool)]
    f.rect(x="x", y="y", width=0.95, height=0.9, source=src, line_color=None,
           fill_color={"field": "mean", "transform": mapper})
    f.grid.visible = False
    f.yaxis.ticker = FixedTicker(ticks=list(range(len(rows))))
    f.yaxis.major_label_overrides = {i: label for i, label in enumerate(rows)}
    f.yaxis.major_label_text_font_size = "11px"
    f.xaxis.axis_label = "files (in name order; a cell is a run of files)"
    f.xaxis.major_label_text_font_size = "0px"
    f.xaxis.major_tick_line_color = None
    f.add_layout(ColorBar(color_mapper=mapper, width=10, ticker=BasicTicker(desired_num_ticks=5),
                          title="reads / file"), "right")
    row_name = CustomJSHover(args={"rows": rows}, code="return rows[value] || ''")
    f.add_tools(HoverTool(tooltips=[("row", "@y{custom}"), ("files", "@files (@first to @last of the row)"),
                                    ("size", "@bytes{0.0 ib}"), ("reads", "@reads (@mean{0.0} per file)")],
                          formatters={"@y": row_name}))
    return f


def advice_chart(item: dict[str, Any]) -> Any | None:
    """One table's what-if: predicted bytes read per candidate layout, the low–high spread as error bars."""
    cands = item.get("candidates") or []
    if not cands:
        return None
    rec = (item.get("recommended") or {}).get("layout")
    layouts = [str(c["layout"]) for c in cands]
    colors = ["#2ca25f" if lay == rec else "#969696" if lay == "today" else "#6baed6" for lay in layouts]
    unit, size = _unit(max(float(c["bytes_high"]) for c in cands))
    src = ColumnDataSource({
        "layout": layouts, "bytes": [float(c["bytes_read"]) / size for c in cands],
        "low": [float(c["bytes_low"]) / size for c in cands], "high": [float(c["bytes_high"]) / size for c in cands],
        "files": [float(c["files_read"]) for c in cands], "color": colors,
        "bytes_h": [human_bytes(int(c["bytes_read"])) for c in cands],
        "range_h": [f"{human_bytes(int(c['bytes_low']))} – {human_bytes(int(c['bytes_high']))}" for c in cands],
        "saving_h": [f"{100 * float(c['saving']):+.1f}%" for c in cands]})
    f = _fig(x_range=FactorRange(factors=list(layouts)), height=300,
             title=f"Predicted bytes read per layout ({redact(str(item.get('table', '')))})")
    f.vbar(x="layout", top="bytes", width=0.6, source=src, fill_color="color", line_color=None)
    spread = Whisker(source=src, base="layout", upper="high", lower="low", line_width=1.5, line_color="#252525",
                     level="overlay", upper_head=TeeHead(size=10, line_color="#252525"),
                     lower_head=TeeHead(size=10, line_color="#252525"))
    f.add_layout(spread)
    f.yaxis.axis_label = unit
    f.y_range = Range1d(start=0, end=max(max(src.data["high"]), max(src.data["bytes"]), 1e-9) * 1.08)
    f.xaxis.major_label_orientation = 0.5 if len(layouts) > 5 else 0
    f.add_tools(HoverTool(tooltips=[("layout", "@layout"), ("bytes read", "@bytes_h (@range_h)"),
                                    ("files read", "@files{0.0}"), ("saving", "@saving_h")], mode="vline"))
    return f


# ---- HTML ---------------------------------------------------------------------------------------------------

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;background:#fafafa}
main{max-width:1280px;margin:0 auto;padding:8px 24px 48px}
h1{font-size:22px;margin:16px 0 4px}h2{font-size:18px;margin:32px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:20px 0 6px}
nav.toc{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 14px;margin:12px 0;columns:2}
nav.toc a{display:block;text-decoration:none;color:#2166ac;padding:1px 0}
table{border-collapse:collapse;background:#fff;margin:6px 0;font-size:13px;width:100%}
th,td{border:1px solid #e0e0e0;padding:3px 7px;text-align:right;vertical-align:top}
th{background:#f0f0f0;position:sticky;top:0}td.l,th.l{text-align:left}tr:nth-child(even) td{background:#fbfbfb}
code,.f{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;overflow-wrap:anywhere}
td:not(.l){white-space:nowrap}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:150px}
.card b{display:block;font-size:18px}.note{color:#666;font-size:12px}.bad{color:#b2182b}
pre.settings{background:#272822;color:#f8f8f2;padding:10px;border-radius:6px;overflow:auto}
.chart{background:#fff;border:1px solid #eee;margin:6px 0}button.copy{font-size:12px;margin:2px 0}
details summary{cursor:pointer;color:#2166ac}
"""

COPY_JS = """function hbCopy(id){var t=document.getElementById(id);if(!t)return;var s=t.innerText;
if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(s);}
else{var r=document.createRange();r.selectNodeContents(t);var sel=window.getSelection();sel.removeAllRanges();
sel.addRange(r);try{document.execCommand('copy');}catch(x){}}}"""


def _fold(body: str, k: int, what: str) -> str:
    """The ``k``-th table's section: shown for the first ``OPEN_TABLES`` tables, folded (one click) after."""
    return body if k < OPEN_TABLES else f"<details><summary>show the {what}</summary>{body}</details>"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[int] = (0,)) -> str:
    """A plain HTML table; cells are HTML already (escape them first)."""
    th = "".join(f'<th class="{"l" if i in left else ""}">{h}</th>' for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(f'<td class="{"l" if i in left else ""}">{c}</td>' for i, c in enumerate(r))
                   + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _ratio(kept: int, total: int) -> str:
    return f"{kept} / {total}" + (f" ({100 * kept / total:.0f}%)" if total else "")


def _overview(d: dict[str, Any]) -> str:
    saved = d["bytes_unpruned"] - d["hive_bridge_bytes_kept"]
    cards = [("tables", str(len(d["tables"]))), ("scans", str(d["scans"])),
             ("distinct filters", str(d["filters"])), ("occurrences", str(d["occurrences"])),
             ("no pruning, all scans", human_bytes(d["bytes_unpruned"])),
             ("hive-bridge keeps, all scans", human_bytes(d["hive_bridge_bytes_kept"])
              + (f" ({100 * saved / d['bytes_unpruned']:.1f}% skipped)" if d["bytes_unpruned"] else "")),
             (f"Spark read ({d['spark_scans_measured']} measured scans)", human_bytes(d["spark_bytes_read"])),
             ("hive-bridge keeps, same scans", human_bytes(d["hive_bridge_bytes_kept_measured"]))]
    if d["hudi_scans_measured"]:
        cards.append((f"Hudi kept ({d['hudi_scans_measured']} scans)",
                      f"{d['hudi_candidate_files']} file slices vs {d['hive_bridge_files_kept_hudi_measured']}"))
    nr = d["not_read"]
    cards.append(("could not be read", f"{nr['problems']} problems, {len(nr['tables_unopened'])} tables, "
                                       f"{sum(u['scans'] for u in nr['scans_unresolved'])} scans"))
    return '<div class="cards">' + "".join(f"<div class=card>{e(k)}<b>{e(v)}</b></div>" for k, v in cards) + "</div>"


def _tables_table(tables: list[dict[str, Any]]) -> str:
    rows = []
    for i, t in enumerate(tables, start=1):
        name = f'<a href="#table-{i}">{i}. {e(t["table"])}</a>'
        if "error" in t:
            rows.append([name, str(t["scans"]), "-", "-", "-", "-", "-", "-",
                         f'<span class=bad>not opened: {e(t["error"])}</span>'])
            continue
        spark = (f"{human_bytes(t['spark_bytes_read'])} ({t['spark_files_read']} files) vs "
                 f"{human_bytes(t['hive_bridge_bytes_kept_measured'])} ({t['hive_bridge_files_kept_measured']} "
                 f"files) in {t['spark_scans_measured']} scans" if t["spark_scans_measured"] else "-")
        hudi = (f"{t['hudi_candidate_files']} vs {t['hive_bridge_files_kept_hudi_measured']} files in "
                f"{t['hudi_scans_measured']} scans" if t["hudi_scans_measured"] else "-")
        unknown = f"{_n(t['unknown_filters'], 'filter')}, {_n(t['kept_unknown'], 'file')}"
        rows.append([name + f'<div class=note>{e(t["table_type"] or "")}, {t["slices"]} file slices</div>',
                     str(t["scans"]), str(t["filters"]), human_bytes(t["bytes_unpruned"]),
                     human_bytes(t["hive_bridge_bytes_kept"]), e(spark), e(hudi), e(unknown),
                     f"{t['failed_filters']} filters failed" if t["failed_filters"] else ""])
    return _table(["table", "scans", "filters", "no pruning", "hive-bridge keeps", "Spark read vs hive-bridge",
                   "Hudi kept vs hive-bridge", "unknown (× occurrences)", "failed"], rows, left=(0, 5, 6, 7, 8))


def _not_read(nr: dict[str, Any]) -> str:
    parts = [f"<p>{nr['problems']} input problems, {len(nr['tables_unopened'])} tables not opened, "
             f"{sum(u['scans'] for u in nr['scans_unresolved'])} scans without a table, "
             f"{nr['filters_failed']} filters that could not be planned.</p>"]
    if nr["tables_unopened"]:
        parts.append("<h3>Tables not opened</h3>" + _table(
            ["table", "scans", "error"], [[e(t["table"]), str(t["scans"]), e(t["error"] or "")]
                                          for t in nr["tables_unopened"]], left=(0, 2)))
    if nr["scans_unresolved"]:
        parts.append("<h3>Scans whose Hudi table was not found</h3><p class=note>give --table NAME=URI or "
                     "--metastore</p>" + _table(["scanned", "scans"], [[f'<span class=f>{e(u["name"])}</span>',
                                                                       str(u["scans"])]
                                                                      for u in nr["scans_unresolved"]]))
    if nr["problem_messages"]:
        more = nr["problems"] - len(nr["problem_messages"])
        parts.append("<h3>Input problems</h3><ul>" + "".join(f"<li class=f>{e(m)}</li>"
                                                             for m in nr["problem_messages"]) + "</ul>"
                     + (f"<p class=note>and {more} more (the terminal output lists them all)</p>" if more else ""))
    if nr["failed_messages"]:
        parts.append("<h3>Filters that could not be planned</h3>" + _table(
            ["table", "filter", "error"], [[e(f["table"]), f'<span class=f>{e(f["filter"])}</span>', e(f["error"])]
                                           for f in nr["failed_messages"]], left=(0, 1, 2)))
    return "".join(parts)


def _filters_table(t: dict[str, Any]) -> str:
    rows = []
    for k, r in enumerate(t["filters_top"], start=1):
        text = f'<span class=f>{e(r["filter"])}</span>' if r["filter"] else "<i>(no filter)</i>"
        if r["unknown_filter_texts"]:
            text += "<div class=note>unknown: " + "; ".join(f"<code>{e(u)}</code>"
                                                           for u in r["unknown_filter_texts"]) + "</div>"
        queries = ", ".join(f"<code>{e(q)}</code>" for q in r["queries"])
        if r["queries_more"] > 0:
            queries += f" <span class=note>+{r['queries_more']} more</span>"
        if "files_kept" in r:
            files, size = _ratio(r["files_kept"], r["files_total"]), (f"{human_bytes(r['bytes_kept'])} / "
                                                                       f"{human_bytes(r['bytes_total'])}")
        else:
            files, size = f'<span class=bad>{e(r["error"] or "not planned")}</span>', ""
        spark = (f"{human_bytes(r['spark_bytes'] // r['spark_scans'])} (mean of {r['spark_scans']})"
                 if r.get("spark_scans") else "-")
        if r.get("hudi_scans"):
            spark += f"; Hudi kept {r['hudi_candidates'] / r['hudi_scans']:.0f} file slices"
        unknown = f"{_n(r['unknown_filters'], 'filter')}, {_n(r.get('kept_unknown', 0), 'file')}"
        rows.append([str(k), text, str(r["occurrences"]), files, size, human_bytes(r["cost"]), e(unknown),
                     e(spark), queries])
    more = (f"<p class=note>{t['filters_left_out']} more filters of this table are left out (they cost less); "
            f"--json lists every one.</p>" if t["filters_left_out"] else "")
    return _table(["#", "filter (HiveQL)", "seen", "files kept", "bytes kept", "cost (bytes × seen)", "unknown",
                   "Spark read", "queries"], rows, left=(1, 6, 7, 8)) + more


def _columns_table(cols: list[dict[str, Any]]) -> str:
    if not cols:
        return "<p class=note>no typed filter names a column of this table</p>"
    return _table(["column", "distinct filters", "occurrences", "files kept (mean)", "bytes kept (mean)",
                   "filters on it alone (occurrences)", "files kept, alone", "filters keeping unknown files"],
                  [[f"<code>{e(c['column'])}</code>", str(c["filters"]), str(c["occurrences"]),
                    _pct(c["kept_files"]), _pct(c["kept_bytes"]), str(c["alone_occurrences"]),
                    _pct(c["alone_kept_files"]), str(c["filters_with_unknown"])] for c in cols])


def _partitions_table(heat: dict[str, Any], limit: int = 15) -> str:
    parts = heat["partition_reads"]
    if not heat["partitioned"]:
        return ""
    body = _table(["partition", "files", "scans reading it", "file reads"],
                  [[f"<code>{e(p['partition'])}</code>", str(p["files"]), str(p["scans"]), str(p["reads"])]
                   for p in parts[:limit]])
    more = f"<p class=note>{len(parts) - limit} more partitions</p>" if len(parts) > limit else ""
    return f"<details><summary>partitions read most</summary>{body}{more}</details>"


def _advice_block(i: int, item: dict[str, Any], div: str | None) -> str:
    head = (f"<h3 id=advice-{i}>{e(redact(str(item.get('table', ''))))}</h3><p class=note>"
            f"{_n(int(item.get('filters', 0)), 'filter')}, {_n(int(item.get('samples', 0)), 'sample')} of "
            f"{int(item.get('sample_rows', 0))} rows, target file size "
            f"{human_bytes(int(item.get('target_file_bytes', 0)))}</p>")
    rows = [[f"<code>{e(str(c['layout']))}</code>", f"{float(c['files_read']):.1f}",
             human_bytes(int(c["bytes_read"])),
             f"{human_bytes(int(c['bytes_low']))} – {human_bytes(int(c['bytes_high']))}",
             f"{100 * float(c['saving']):+.1f}%"] for c in item.get("candidates") or []]
    body = (f"<div class=chart>{div}</div>" if div else "") + (_table(
        ["layout", "files read", "bytes read", "low – high", "saving"], rows) if rows else "")
    rec = item.get("recommended")
    if rec:
        settings = "\n".join(f"{k}={v}" for k, v in (rec.get("settings") or {}).items())
        body += (f"<p>Recommended: <b><code>{e(str(rec.get('layout', '')))}</code></b>, saving "
                 f"{100 * float(rec.get('saving', 0.0)):.1f}% of today's bytes. Hudi settings:</p>"
                 f'<button class=copy onclick="hbCopy(\'settings-{i}\')">copy</button>'
                 f"<pre class=settings id=settings-{i}>{e(settings)}</pre>")
        sql = "\n".join(f"{statement};" for statement in rec.get("sql") or [])
        if sql:
            body += ("<p>Or cluster now (Spark SQL with Hudi's extension):</p>"
                     f'<button class=copy onclick="hbCopy(\'sql-{i}\')">copy</button>'
                     f"<pre class=settings id=sql-{i}>{e(sql)}</pre>")
    else:
        body += "<p>No layout is recommended for this table.</p>"
    notes = [f"warning: {w}" for w in item.get("warnings") or []] + list(item.get("notes") or [])
    if notes:
        body += "<ul>" + "".join(f"<li>{e(str(n))}</li>" for n in notes) + "</ul>"
    return head + body


def render_report(work: Workload, failures: int, problems: Sequence[Problem], *,
                  advice: Sequence[LayoutAdvice] | None = None, top: int = TOP_FILTERS,
                  title: str = "hive-bridge workload report") -> str:
    """The workload replay as one self-contained HTML page (a string).

    ``advice``: the layout advisor's advice, one :class:`LayoutAdvice` per table; None when the advisor was not
    run (the section says how to run it)."""
    return render_insights(workload_insights(work, failures, problems, top=top), advice=advice, title=title)


def render_insights(d: dict[str, Any], *, advice: Sequence[LayoutAdvice] | None = None,
                    title: str = "hive-bridge workload report") -> str:
    """The page for :func:`~hive_bridge.workload.insights.workload_insights`' data (see :func:`render_report`).
    Every text of the page comes from ``d``, ``advice`` and ``title``: they are redacted first, so no credential
    reaches the page whichever section or chart shows it."""
    d, title = redact_data(d), redact(title)
    items: list[dict[str, Any]] | None = redact_data([_advice_data(a) for a in advice]) if advice is not None \
        else None
    tables = d["tables"]
    plots: dict[str, Any] = {}
    if (f := bytes_chart(tables)) is not None:
        plots["bytes"] = f
    if (f := columns_chart(tables)) is not None:
        plots["columns"] = f
    for i, t in enumerate(tables, start=1):
        heat = t.get("heat")
        if heat and (f := heat_chart(heat, f"Reads per file: {_short(t['table'], i)}")) is not None:
            plots[f"heat-{i}"] = f
    for i, item in enumerate(items or [], start=1):
        if (f := advice_chart(item)) is not None:
            plots[f"advice-{i}"] = f
    if plots:   # one document for every chart, its model graph computed once (not once per chart added)
        doc = Document()
        with doc.models.freeze():
            for plot in plots.values():
                doc.add_root(plot)
    script, divs = components(plots) if plots else ("", {})

    def chart(name: str) -> str:
        return f"<div class=chart>{divs[name]}</div>" if name in divs else ""

    toc = [("overview", "Overview"), ("tables", "Tables: bytes read"), ("not-read", "What could not be read"),
           ("filters", "Costliest filters"), ("columns", "Columns"), ("heat", "Partitions and files read"),
           ("advisor", "Layout advisor")]
    out = [f"<h1>{e(title)}</h1>",
           "<nav class=toc>" + "".join(f'<a href="#{a}">{e(n)}</a>' for a, n in toc) + "</nav>",
           "<h2 id=overview>Overview</h2>", _overview(d),
           "<h2 id=tables>Tables: bytes read</h2><p class=note>hive-bridge's bytes are the files it keeps for "
           "each filter, times its occurrences; Spark's are what the log says Spark read, for the scans it "
           "measured (compare them with hive-bridge's for the same scans). Hudi's figure is its own data "
           "skipping's count of candidate file slices.</p>",
           chart("bytes"), _tables_table(tables),
           "<h2 id=not-read>What could not be read</h2>", _not_read(d["not_read"]),
           "<h2 id=filters>Costliest filters</h2><p class=note>Cost: bytes hive-bridge keeps × occurrences. "
           f"The top {e(str(max((len(t.get('filters_top', [])) for t in tables), default=0)))} per table."]
    out[-1] += "</p>"
    opened = [(i, t) for i, t in enumerate(tables, start=1) if "error" not in t]
    for k, (i, t) in enumerate(opened):
        out.append(f"<h3 id=table-{i}>{i}. {e(t['table'])}</h3>" + _fold(_filters_table(t), k, "filters"))
    out.append("<h2 id=columns>Columns</h2><p class=note>Per column of the typed filters: how often it is "
               "filtered on, and the mean fraction of files (bytes) kept by the filters naming it, weighted by "
               "occurrences; \"alone\": filters naming only that column.</p>" + chart("columns"))
    for k, (i, t) in enumerate(opened):
        more = (f"<p class=note>{t['columns_left_out']} more columns, filtered on less</p>"
                if t["columns_left_out"] else "")
        out.append(f"<h3 id=columns-{i}>{i}. {e(t['table'])}</h3>"
                   + _fold(_columns_table(t["columns"]) + more, k, "columns"))
    out.append("<h2 id=heat>Partitions and files read</h2><p class=note>Each cell is a run of files (in name "
               "order) of a partition, or of neighbouring partitions; its colour is the mean number of reads per "
               "file (a filter keeping the file counts its occurrences); grey: never read.</p>")
    for i, t in opened:
        heat = t.get("heat") or {}
        out.append(f"<h3 id=heat-{i}>{i}. {e(t['table'])}</h3><p class=note>{_n(heat.get('files', 0), 'file slice')} "
                   f"in {_n(heat.get('partitions', 0), 'partition')}; {heat.get('files_read', 0)} read at least once, "
                   f"{heat.get('reads', 0)} file reads in all</p>" + chart(f"heat-{i}") + _partitions_table(heat)
                   if heat else "")
    out.append("<h2 id=advisor>Layout advisor</h2>")
    if items is None:
        out.append(f"<p>The layout advisor was not run for this report. Run <code>{e(ADVISE_COMMAND)}</code> "
                   "for its what-if figures: the bytes each candidate layout (linear, z-order, Hilbert orders, "
                   "partitioning) would read for this workload, and the Hudi settings of the best one.</p>")
    elif not items:
        out.append("<p>The layout advisor had no table to advise on.</p>")
    for i, item in enumerate(items or [], start=1):
        out.append(_advice_block(i, item, divs.get(f"advice-{i}")))
    res = Resources(mode="inline", components=["bokeh"])
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width, initial-scale=1"><title>{e(title)}</title><style>{CSS}</style>'
            f"{res.render_js() if plots else ''}<script>{COPY_JS}</script>{script}</head>"
            f"<body><main>{''.join(out)}</main></body></html>\n")


def write_report(path: str | Path, work: Workload, failures: int, problems: Sequence[Problem], *,
                 advice: Sequence[LayoutAdvice] | None = None) -> int:
    """Write the page to ``path``; its size in bytes."""
    text = render_report(work, failures, problems, advice=advice)
    data = text.encode("utf-8")
    Path(path).write_bytes(data)
    return len(data)
