#!/usr/bin/env python3
"""The broad-crawl benchmark's result lines and table (bench/broad.sh).

usage: broad_summary.py row --peer NAME --rep R --rc RC [--time TIME_V_FILE] [--jsonl OUT.jsonl]
                            [--kumo-summary S.json] [--stats STATS.json] [--judge JUDGE.json]
                            [--site-cpu SECONDS] [--note TEXT]
           prints one JSON line (broad.sh appends it to results.jsonl)
       broad_summary.py table RESULTS_DIR
           prints the Markdown table (broad.sh saves it as table.md)

pages are the lines of the peer's output (one per page fetched); violations are the test site's
judge's counts (--web-judge), None when the site had no judge or did not write it.
broad_chart.py imports aggregate() from here, so the chart and the table show the same numbers.
"""
import argparse
import json
import os
import sys
from collections import OrderedDict
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_run import parse_time_v  # noqa: E402
from summarize import cpu_s, med  # noqa: E402

PEERS = ("kumo-single", "kumo-broad", "scrapy-broad")
DESCRIPTION = {
    "kumo-single": "kumo on one host (defaults), the baseline",
    "kumo-broad": "kumo `--broad`",
    "scrapy-broad": "Scrapy, as its Broad Crawls page advises",
}
# The judge's kinds of violation, in the table's order.
BY_HOST = ("host_gap", "host_overlap")
BY_IP = ("ip_overlap", "ip_gap")
OTHER = ("disallowed", "outside", "misrouted", "dead_names")
KINDS = BY_HOST + BY_IP + OTHER
# pages/s, CPU per page and peak memory of the first over the second
RATIOS = (("kumo-broad", "kumo-single"), ("kumo-broad", "scrapy-broad"))


def load_json(path):
    if path and os.path.exists(path):
        try:
            with open(path) as f:
                return json.load(f)
        except (OSError, json.JSONDecodeError):
            return None
    return None


def count_pages(path):
    """(pages, broken lines, non-200 rows, distinct hosts) of a JSONL output."""
    pages = broken = non200 = 0
    hosts = set()
    if not path or not os.path.exists(path):
        return 0, 0, 0, 0
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                broken += 1  # a run killed mid-write
                continue
            pages += 1
            if r.get("status") != 200:
                non200 += 1
            try:
                hosts.add(urlsplit(r.get("url") or "").hostname)
            except ValueError:
                pass
    return pages, broken, non200, len(hosts - {None})


def violations(judge):
    """The judge's counts by kind (a count, or a tally with a count), or None."""
    if not isinstance(judge, dict) or not isinstance(judge.get("violations"), dict):
        return None
    out = {}
    for k, v in judge["violations"].items():
        out[k] = v.get("count") if isinstance(v, dict) else v
    return out


def row(a):
    r = {"peer": a.peer, "rep": a.rep, "rc": a.rc}
    if a.note:
        r["note"] = a.note
    r["pages"], r["broken_lines"], r["non200"], r["hosts"] = count_pages(a.jsonl)
    r.update(parse_time_v(a.time) if a.time else {})
    if a.site_cpu is not None:
        r["site_cpu_s"] = a.site_cpu
    s = load_json(a.kumo_summary)
    if isinstance(s, dict):
        r["kumo_pages"] = s.get("pages")
        r["kumo_status"] = s.get("stopped_by") or s.get("status")
        r["robots_fetched"] = (s.get("robots") or {}).get("fetched")
    s = load_json(a.stats)
    if isinstance(s, dict):
        r["scrapy_reason"] = s.get("reason")
        r["robots_fetched"] = s.get("robotstxt/request_count")
    if a.judge:
        j = load_json(a.judge)
        r["judged"] = isinstance(j, dict)
        r["requests"] = j.get("requests") if isinstance(j, dict) else None
        r["trap_requests"] = j.get("trap") if isinstance(j, dict) else None
        r["violations"] = violations(j)
    return r


def aggregate(rows):
    """Per peer, in the order first run: medians, violations, notes."""
    by = OrderedDict()
    for r in rows:
        by.setdefault(r["peer"], []).append(r)
    out = OrderedDict()
    for peer, rs in by.items():
        s = {"peer": peer, "runs": len(rs)}
        s["pages"] = med([r.get("pages") for r in rs])
        s["pages_per_s"] = med([r["pages"] / r["wall_s"] for r in rs if r.get("wall_s") and r.get("pages")])
        s["cpu_ms_per_page"] = med([cpu_s(r) * 1e3 / r["pages"] for r in rs
                                    if cpu_s(r) is not None and r.get("pages")])
        rss = med([r.get("maxrss_kb") for r in rs])
        s["rss_mib"] = rss / 1024 if rss is not None else None
        s["wall_s"] = med([r.get("wall_s") for r in rs])
        s["cpu_s"] = med([cpu_s(r) for r in rs])
        s["site_cpu_s"] = med([r.get("site_cpu_s") for r in rs])
        s["hosts"] = med([r.get("hosts") for r in rs])
        s["robots"] = med([r.get("robots_fetched") for r in rs])
        s["requests"] = med([r.get("requests") for r in rs])
        s["trap_requests"] = med([r.get("trap_requests") for r in rs])
        # violations: None when no run of this peer was judged (kumo-single never is)
        judged = [r["violations"] for r in rs if r.get("violations") is not None]
        s["judged"] = "violations" in rs[0]
        s["violations"] = ({k: med([v.get(k) for v in judged]) for k in KINDS} if judged else None)
        notes = []
        rcs = sorted({r.get("rc") for r in rs})
        if rcs != [0]:
            notes.append("exit " + ",".join(str(x) for x in rcs)
                         + (" (124 = timed out)" if 124 in rcs else ""))
        for r in rs:
            if r.get("note"):
                notes.append(r["note"])
        if s["judged"] and len(judged) < len(rs):
            notes.append(f"judged {len(judged)}/{len(rs)} runs")
        broken = max((r.get("broken_lines") or 0) for r in rs)
        if broken:
            notes.append(f"broken JSONL lines {broken}")
        non200 = max((r.get("non200") or 0) for r in rs)
        if non200:
            notes.append(f"non-200 rows {non200}")
        ps = sorted({r.get("pages") for r in rs})
        if len(ps) > 1:
            notes.append("pages " + "/".join(str(x) for x in ps))
        stops = sorted({str(r.get("kumo_status") or r.get("scrapy_reason")) for r in rs} - {"None"})
        if stops:
            notes.append("stopped: " + ", ".join(stops))
        s["notes"] = notes
        out[peer] = s
    return out


def ratios(agg):
    """[(a, b, pages/s ratio, CPU-per-page ratio, memory ratio)] for the pairs both present."""
    out = []
    for a, b in RATIOS:
        if a in agg and b in agg:
            x, y = agg[a], agg[b]
            out.append((a, b, *(x[k] / y[k] if x[k] and y[k] else None
                                 for k in ("pages_per_s", "cpu_ms_per_page", "rss_mib"))))
    return out


def num(x, nd=0, unit=""):
    if x is None:
        return "—"
    return f"{x:,.{nd}f}{unit}"


def pair(v, keys):
    if v is None:
        return "unknown"
    return " / ".join(num(v.get(k)) for k in keys)


def table(rows, versions, meta):
    agg = aggregate(rows)
    lines = []
    reps = meta.get("reps", max((s["runs"] for s in agg.values()), default=0))
    if meta:
        lines.append(
            f"A synthetic web of {meta['hosts']:,} host names on {meta['addresses']:,} loopback addresses "
            f"(seed {meta['web_seed']}), with its own DNS server; every crawl stopped after "
            f"{meta['max_pages']:,} pages. kumo-single crawls one host of {meta['max_pages']:,} pages. "
            f"Each peer run {reps} time{'' if reps == 1 else 's'}, in alternating order, each on a fresh "
            f"test site; medians.")
    m = []
    if meta.get("date"):
        m.append(meta["date"])
    if meta.get("cpus"):
        m.append(f"{meta['cpus']} CPUs" + (f" ({meta['cpu_model']})" if meta.get("cpu_model") else ""))
    if meta.get("kernel"):
        m.append(f"Linux {meta['kernel']}")
    if meta.get("kumo_args"):
        m.append(f"KUMO_ARGS=`{meta['kumo_args']}`")
    if m:
        lines.append("Run: " + ", ".join(m) + ".")
    if meta:
        lines.append("Judged by the test site: " + (f"`{meta['judge']}`." if meta.get("judge")
                                                     else "no judge (this kumo has no `--web-judge`)."))
    lines.append("")
    lines.append("| peer | version | pages | pages/s | CPU per page | peak RSS | by host: gap / overlap "
                 "| by IP: overlap / gap |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for peer, s in agg.items():
        name = f"{DESCRIPTION.get(peer, peer)} (`{peer}`)"
        version = versions.get("scrapy" if peer.startswith("scrapy") else "kumo", "?")
        v = s["violations"]
        host = pair(v, BY_HOST) if s["judged"] else "n/a"
        ip = pair(v, BY_IP) if s["judged"] else "n/a"
        lines.append(f"| {name} | {version} | {num(s['pages'])} | {num(s['pages_per_s'])} | "
                     f"{num(s['cpu_ms_per_page'], 2, ' ms')} | {num(s['rss_mib'], 0, ' MiB')} | {host} | {ip} |")
    rs = ratios(agg)
    if rs:
        lines.append("")
        lines.append("| ratio | pages/s | CPU per page | peak RSS |")
        lines.append("|---|---:|---:|---:|")
        for a, b, pps, cpu, mem in rs:
            lines.append(f"| {a} ÷ {b} | **{num(pps, 2, '×')}** | {num(cpu, 2, '×')} | {num(mem, 2, '×')} |")
    lines.append("")
    lines.append("Details (medians): wall and CPU (user + system) seconds of the crawler, CPU seconds of "
                 "the test site during the crawl, distinct hosts in the output, robots.txt requests "
                 "(the crawler's count), requests the judge saw (and of them, to the trap host), and the "
                 "judge's other violations: "
                 "pages robots.txt forbids (a 5xx robots.txt forbids all), requests outside the web "
                 "a polite crawl reaches (unknown pages, or pages linked only from forbidden ones), "
                 "requests to the wrong address, requests to dead names.")
    lines.append("")
    lines.append("| peer | runs | wall s | CPU s | site CPU s | hosts | robots.txt | requests "
                 "| trap | disallowed / outside / misrouted / dead names | notes |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for peer, s in agg.items():
        other = pair(s["violations"], OTHER) if s["judged"] else "n/a"
        lines.append(f"| {peer} | {s['runs']} | {num(s['wall_s'], 1)} | {num(s['cpu_s'], 1)} | "
                     f"{num(s['site_cpu_s'], 1)} | {num(s['hosts'])} | {num(s['robots'])} | "
                     f"{num(s['requests'])} | {num(s['trap_requests'])} | {other} | {'; '.join(s['notes'])} |")
    return "\n".join(lines) + "\n"


def load(results_dir):
    """(rows, versions, meta) of a results folder."""
    with open(os.path.join(results_dir, "results.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    versions = load_json(os.path.join(results_dir, "versions.json")) or {}
    meta = load_json(os.path.join(results_dir, "meta.json")) or {}
    return rows, versions, meta


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("row", "table"):
        sys.exit(__doc__)
    if sys.argv[1] == "table":
        if len(sys.argv) != 3:
            sys.exit(__doc__)
        sys.stdout.write(table(*load(sys.argv[2])))
        return
    p = argparse.ArgumentParser(prog="broad_summary.py row")
    p.add_argument("--peer", required=True)
    p.add_argument("--rep", type=int, required=True)
    p.add_argument("--rc", type=int, required=True)
    p.add_argument("--time")
    p.add_argument("--jsonl")
    p.add_argument("--kumo-summary")
    p.add_argument("--stats")
    p.add_argument("--judge")
    p.add_argument("--site-cpu", type=float)
    p.add_argument("--note")
    print(json.dumps(row(p.parse_args(sys.argv[2:]))))


if __name__ == "__main__":
    main()
