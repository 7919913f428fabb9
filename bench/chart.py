#!/usr/bin/env python3
"""An SVG bar chart of one benchmark run: pages/s, CPU per page and peak memory, one bar per peer.

usage: chart.py RESULTS_DIR [OUT.svg]      (default RESULTS_DIR/chart.svg)

Plain SVG text, no third-party package; the numbers are summarize.aggregate()'s, the same as
the table's. White background, 900 px wide: made to be embedded in a README.
"""
import os
import sys
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summarize  # noqa: E402

WIDTH = 900
LABEL_W = 200          # the peer names on the left
PANEL_GAP = 28
TOP = 116              # where the first bar row starts
ROW = 42               # one peer's row
BAR_H = 22
FONT = "-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
KUMO = "#2563eb"
PEER = "#9ca3af"
BAD = "#dc2626"
TEXT = "#111827"
MUTED = "#6b7280"
RULE = "#e5e7eb"

SHORT = {
    "kumo": "links + page records",
    "kumo-items": "items, spider file",
    "kumo-items-64": "items, 64 per host",
    "spider-rs-noextract": "no HTML parsing",
    "spider-rs": "items, scraper",
    "spider-rs-defaults": "default features, items",
    "scrapy": "items",
    "crawlee": "CheerioCrawler, items",
    "crawlee-min64": "minConcurrency 64, items",
    "crawlee-mem": "storage in memory, items",
    "wget2": "mirror only",
    "wget": "mirror only",
}

# (key, title, subtitle, how to write a value, room kept right of the longest bar for its label)
PANELS = [
    ("pages_per_s", "pages/s", "higher is better", lambda v: f"{v:,.0f}", 104),
    ("cpu_us_per_page", "CPU per page, µs", "lower is better", lambda v: f"{v:,.0f}", 48),
    ("rss_mib", "peak memory, MiB", "lower is better", lambda v: f"{v:,.0f}", 48),
]


def text(x, y, s, size=12, weight="normal", fill=TEXT, anchor="start"):
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" font-weight="{weight}" '
            f'fill="{fill}" text-anchor="{anchor}">{escape(s)}</text>')


def panels(out, agg, specs, label_w, panel_w, n_rows, row, ratio_of):
    """One panel per spec (key, title, subtitle, how to write a value, room for its label): a
    bar per peer, kumo's blue and the others grey, an incomplete run's outlined red, and the
    pages/s label followed in bold by `ratio_of(peer)` when that gives one."""
    for k, (key, title, subtitle, fmt, room) in enumerate(specs):
        x0 = label_w + k * (panel_w + PANEL_GAP)
        out.append(text(x0, TOP - 36, title, size=13, weight="bold"))
        out.append(text(x0, TOP - 21, subtitle, size=11, fill=MUTED))
        vals = [s[key] for s in agg if s[key] is not None]
        top = max(vals) if vals else 1
        scale = (panel_w - room) / top if top else 0
        out.append(f'<line x1="{x0:.1f}" y1="{TOP - 12}" x2="{x0:.1f}" '
                   f'y2="{TOP + n_rows * row - 14}" stroke="{MUTED}" stroke-width="1"/>')
        for i, s in enumerate(agg):
            y = TOP + i * row - 4
            v = s[key]
            if v is None:
                out.append(text(x0 + 6, y + BAR_H / 2 + 4, "n/a", size=12, fill=MUTED))
                continue
            w = max(v * scale, 1.5)
            fill = KUMO if s["peer"].startswith("kumo") else PEER
            stroke = f' stroke="{BAD}" stroke-width="2"' if not s.get("complete", True) else ""
            out.append(f'<rect x="{x0:.1f}" y="{y:.1f}" width="{w:.1f}" height="{BAR_H}" '
                       f'rx="2" fill="{fill}"{stroke}/>')
            label, weight = fmt(v), "normal"
            extra = ratio_of(s) if key == "pages_per_s" else None
            if extra:
                label += extra
                weight = "bold"
            out.append(text(x0 + w + 6, y + BAR_H / 2 + 4.5, label, size=12, weight=weight))


def chart(rows, versions, meta):
    agg = list(summarize.aggregate(rows).values())
    n_rows = len(agg)
    panel_w = (WIDTH - LABEL_W - 20 - PANEL_GAP * (len(PANELS) - 1)) / len(PANELS)
    height = TOP + n_rows * ROW + 58
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="{FONT}">',
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
    ]
    n = rows[0]["n"] if rows else 0
    reps = meta.get("reps", max((s["runs"] for s in agg), default=0))
    out.append(text(20, 30, f"kumo beside its peers: a {n:,}-page site on 127.0.0.1",
                    size=18, weight="bold"))
    sub = [f"median of {reps} run{'s' if reps != 1 else ''} each"]
    if meta.get("date"):
        sub.append(meta["date"])
    if meta.get("cpus"):
        sub.append(f"{meta['cpus']} CPUs")
    kv = next((versions[p] for p in ("kumo", "kumo-items", "kumo-items-64") if p in versions), None)
    if kv:
        sub.append(kv)
    out.append(text(20, 52, " · ".join(sub), size=12, fill=MUTED))
    out.append(text(20, TOP - 21, "crawler", size=11, fill=MUTED))

    # peer names, and a rule between groups (a kumo mode starts a group with its counterpart)
    for i, s in enumerate(agg):
        y = TOP + i * ROW
        peer = s["peer"]
        if i and peer in summarize.COUNTERPART:
            out.append(f'<line x1="20" y1="{y - 10:.1f}" x2="{WIDTH - 20}" y2="{y - 10:.1f}" '
                       f'stroke="{RULE}" stroke-width="1"/>')
        color = TEXT if s["complete"] else BAD
        out.append(text(20, y + 9, peer, size=13, weight="bold", fill=color))
        note = SHORT.get(peer, "")
        if not s["complete"]:
            note = "INCOMPLETE" + (f", bad items {s['bad_items_max']:,}" if s["bad_items_max"] else "")
        out.append(text(20, y + 25, note, size=11, fill=BAD if not s["complete"] else MUTED))

    panels(out, agg, PANELS, LABEL_W, panel_w, n_rows, ROW,
           lambda s: f" ({s['ratio']:.2f}×)" if s.get("ratio") is not None else None)

    foot = TOP + n_rows * ROW + 8
    ratio = ("Bold ratio: kumo's pages/s over the grey peer below it that does the same work. "
             if any(s.get("ratio") is not None for s in agg) else "")
    out.append(text(20, foot + 8,
                    ratio + "CPU: user + system time of the crawler's process per page fetched.",
                    size=11, fill=MUTED))
    out.append(text(20, foot + 25,
                    "Peak memory: its largest resident set. Made by bench/run.sh; "
                    "compare within one run, as ratios: the machine is small and shared.",
                    size=11, fill=MUTED))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    d = sys.argv[1]
    dest = sys.argv[2] if len(sys.argv) == 3 else os.path.join(d, "chart.svg")
    rows, versions, meta = summarize.load(d)
    with open(dest, "w") as f:
        f.write(chart(rows, versions, meta))


if __name__ == "__main__":
    main()
