#!/usr/bin/env python3
"""An SVG bar chart of one broad-crawl benchmark run: pages/s, CPU per page and peak memory,
one bar per peer (kumo-single, kumo-broad, scrapy-broad).

usage: broad_chart.py RESULTS_DIR [OUT.svg]      (default RESULTS_DIR/chart.svg)

Plain SVG text, no third-party package; the numbers are broad_summary.aggregate()'s, the same
as the table's. Drawn as chart.py draws the single-host benchmark's chart.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import broad_summary  # noqa: E402
from chart import BAD, FONT, MUTED, PANEL_GAP, RULE, TOP, WIDTH, panels, text  # noqa: E402

LABEL_W = 220
ROW = 56               # one peer's row: its name, what it is, the judge's verdict
SHORT = {
    "kumo-single": "one host, the baseline",
    "kumo-broad": "--broad",
    "scrapy-broad": "Broad Crawls settings",
}
# (key, title, subtitle, how to write a value, room kept right of the longest bar for its label)
PANELS = [
    ("pages_per_s", "pages/s", "higher is better", lambda v: f"{v:,.0f}", 120),
    ("cpu_ms_per_page", "CPU per page, ms", "lower is better", lambda v: f"{v:,.2f}", 48),
    ("rss_mib", "peak memory, MiB", "lower is better", lambda v: f"{v:,.0f}", 48),
]


def violations_note(s):
    """(text, colour): what the judge counted, for the line under the peer's name."""
    v = s.get("violations")
    if not s.get("judged"):
        return "", MUTED
    if v is None:
        return "violations unknown", MUTED
    host = sum(v.get(k) or 0 for k in broad_summary.BY_HOST)
    ip = sum(v.get(k) or 0 for k in broad_summary.BY_IP)
    if not host and not ip:
        return "no violations by host or IP", MUTED
    return f"violations: host {host:,.0f}, IP {ip:,.0f}", BAD


def chart(rows, versions, meta):
    by_peer = broad_summary.aggregate(rows)
    agg = list(by_peer.values())
    # kumo-broad's pages/s over Scrapy's, written after its bar
    ratio = {a: r for a, b, r, _, _ in broad_summary.ratios(by_peer) if b == "scrapy-broad" and r}
    n_rows = len(agg)
    panel_w = (WIDTH - LABEL_W - 20 - PANEL_GAP * (len(PANELS) - 1)) / len(PANELS)
    height = TOP + n_rows * ROW + 58
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="{FONT}">',
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
    ]
    title = "kumo and Scrapy on a broad crawl"
    if meta.get("hosts"):
        title += f": {meta['hosts']:,} hosts, {meta['max_pages']:,} pages"
    out.append(text(20, 30, title, size=18, weight="bold"))
    reps = meta.get("reps", max((s["runs"] for s in agg), default=0))
    sub = [f"median of {reps} run{'s' if reps != 1 else ''} each"]
    if meta.get("addresses"):
        sub.append(f"{meta['addresses']:,} loopback addresses")
    if meta.get("date"):
        sub.append(meta["date"])
    if meta.get("cpus"):
        sub.append(f"{meta['cpus']} CPUs")
    if versions.get("kumo"):
        sub.append(versions["kumo"])
    out.append(text(20, 52, " · ".join(sub), size=12, fill=MUTED))
    out.append(text(20, TOP - 21, "crawler", size=11, fill=MUTED))

    for i, s in enumerate(agg):
        y = TOP + i * ROW
        if i:
            out.append(f'<line x1="20" y1="{y - 10:.1f}" x2="{WIDTH - 20}" y2="{y - 10:.1f}" '
                       f'stroke="{RULE}" stroke-width="1"/>')
        out.append(text(20, y + 9, s["peer"], size=13, weight="bold"))
        out.append(text(20, y + 25, SHORT.get(s["peer"], ""), size=11, fill=MUTED))
        note, colour = violations_note(s)
        if note:
            out.append(text(20, y + 39, note, size=11, fill=colour))

    panels(out, agg, PANELS, LABEL_W, panel_w, n_rows, ROW,
           lambda s: f" ({ratio[s['peer']]:.2f}× Scrapy)" if s["peer"] in ratio else None)

    foot = TOP + n_rows * ROW + 8
    out.append(text(20, foot + 8,
                    "pages/s: pages in the output over wall time. CPU: user + system time of the "
                    "crawler per page. Violations: the test site's judge.",
                    size=11, fill=MUTED))
    out.append(text(20, foot + 25,
                    "Made by bench/broad.sh; compare within one run, as ratios: the machine is "
                    "small and shared.", size=11, fill=MUTED))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    d = sys.argv[1]
    dest = sys.argv[2] if len(sys.argv) == 3 else os.path.join(d, "chart.svg")
    rows, versions, meta = broad_summary.load(d)
    with open(dest, "w") as f:
        f.write(chart(rows, versions, meta))


if __name__ == "__main__":
    main()
