#!/usr/bin/env python3
"""The Markdown table of one benchmark run: medians per peer, from run_peers.sh's results.

usage: summarize.py RESULTS_DIR      (reads results.jsonl, and versions.json and meta.json when
                                      present; prints the table, which run_peers.sh saves as
                                      table.md)
chart.py imports aggregate() from here, so the chart and the table show the same numbers.
"""
import json
import os
import statistics
import sys
from collections import OrderedDict

# What each peer does in the run (see bench/README.md for how each is configured).
DESCRIPTION = {
    "kumo": "kumo: links + a JSON record per page, robots.txt on, 8 per host",
    "kumo-items": "kumo: spider file, items (sku, title, price), robots.txt on, 8 per host",
    "kumo-items-64": "kumo: spider file, items, robots.txt on, 64 per host",
    "spider-rs-noextract": "spider-rs: no HTML parsing",
    "spider-rs": "spider-rs + scraper: items",
    "spider-rs-defaults": "spider-rs, spider's default features: items",
    "scrapy": "Scrapy: items",
    "crawlee": "Crawlee (CheerioCrawler): items",
    "crawlee-min64": "Crawlee, minConcurrency 64: items",
    "crawlee-mem": "Crawlee, storage in memory: items",
    "wget2": "wget2: mirror only",
    "wget": "wget: mirror only",
    "kumo-redis": "kumo on Redis, one worker: links + a JSON record per page, 8 per host",
    "kumo-redis-2": "kumo on Redis, two workers sharing the crawl: 8 per host in all, each on half the CPUs (--threads)",
}
# Each kumo mode is compared with the peer that does the same work.
COUNTERPART = {"kumo": "spider-rs-noextract", "kumo-items": "spider-rs", "kumo-items-64": "spider-rs",
               "kumo-redis": "kumo", "kumo-redis-2": "kumo"}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def load(results_dir):
    """(rows, versions, meta) of a results folder."""
    with open(os.path.join(results_dir, "results.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]

    def opt(name):
        p = os.path.join(results_dir, name)
        if os.path.exists(p):
            with open(p) as f:
                return json.load(f)
        return {}

    return rows, opt("versions.json"), opt("meta.json")


def cpu_s(r):
    if "user_s" not in r:
        return None
    return (r.get("user_s") or 0) + (r.get("sys_s") or 0)


def aggregate(rows):
    """Per peer, in the order first run: the medians and the completeness verdict."""
    by = OrderedDict()
    for r in rows:
        by.setdefault(r["peer"], []).append(r)
    out = OrderedDict()
    for peer, rs in by.items():
        s = {"peer": peer, "runs": len(rs), "items_mode": any(r.get("items_mode") for r in rs)}
        s["pages_per_s"] = med([r["fetched"] / r["wall_s"] for r in rs
                                if r.get("wall_s") and r.get("fetched")])
        s["cpu_us_per_page"] = med([cpu_s(r) * 1e6 / r["fetched"] for r in rs
                                    if cpu_s(r) is not None and r.get("fetched")])
        rss = med([r.get("maxrss_kb") for r in rs])
        s["rss_mib"] = rss / 1024 if rss is not None else None
        s["wall_s"] = med([r.get("wall_s") for r in rs])
        s["cpu_s"] = med([cpu_s(r) for r in rs])
        s["nginx_cpu_s"] = med([r.get("nginx_cpu_s") for r in rs])
        # Redis's own share (the kumo-redis peers): its CPU and commands per fetched page.
        s["redis_cpu_us_per_page"] = med([r["redis_cpu_s"] * 1e6 / r["fetched"] for r in rs
                                          if r.get("redis_cpu_s") is not None and r.get("fetched")])
        s["redis_calls_per_page"] = med([r["redis_calls"] / r["fetched"] for r in rs
                                         if r.get("redis_calls") is not None and r.get("fetched")])
        s["redis_scripts_per_page"] = med([r["redis_scripts"] / r["fetched"] for r in rs
                                           if r.get("redis_scripts") is not None and r.get("fetched")])
        s["redis_mib"] = med([r["redis_used_memory"] / 2**20 for r in rs if r.get("redis_used_memory")])
        s["fetched"] = med([r.get("fetched") for r in rs])
        s["unique_urls"] = med([r.get("unique_urls") for r in rs])
        s["docs_min"] = min((r.get("docs") or 0) for r in rs)
        s["expected_docs"] = rs[0]["expected_docs"]
        s["expected_urls"] = rs[0]["expected_urls"]
        s["complete_runs"] = sum(1 for r in rs if r.get("complete"))
        s["complete"] = s["complete_runs"] == len(rs)
        s["bad_items_max"] = max((r.get("bad_items") or 0) for r in rs)
        s["missing_items_max"] = max((r.get("missing_items") or 0) for r in rs)
        s["items_ok_min"] = min((r.get("items_ok") or 0) for r in rs) if s["items_mode"] else None
        s["rcs"] = sorted({r.get("rc") for r in rs})
        notes = []
        if s["rcs"] != [0]:
            notes.append("exit " + ",".join(str(x) for x in s["rcs"])
                         + (" (124 = timed out)" if 124 in s["rcs"] else ""))
        off = max((r.get("offhost") or 0) for r in rs)
        if off:
            notes.append(f"off-host {off}")
        non200 = max((r.get("non200") or 0) for r in rs)
        if non200:
            notes.append(f"non-200 {non200}")
        uu = sorted({r.get("unique_urls") for r in rs})
        if any(r.get("unique_urls") != r["expected_urls"] for r in rs) and not s["items_mode"]:
            notes.append("unique URLs " + "/".join(str(x) for x in uu))
        fs = sorted({r.get("fetched") for r in rs})
        if len(fs) > 1:
            notes.append("fetched " + "/".join(str(x) for x in fs))
        # the ?view=print variants repeat their page's item: more than that is worth a note
        dup = max((r.get("dup_items") or 0) for r in rs)
        if dup > rs[0]["expected_urls"] - rs[0]["expected_docs"]:
            notes.append(f"repeated items {dup}")
        lag = [(r.get("peer_stats") or {}).get("lagged_dropped") for r in rs]
        if any(lag):
            notes.append(f"dropped (lagged) {max(x for x in lag if x)}")
        broken = max((r.get("broken_lines") or 0) for r in rs)
        if broken:
            notes.append(f"broken JSONL lines {broken}")
        s["notes"] = notes
        out[peer] = s
    for peer, s in out.items():
        c = COUNTERPART.get(peer)
        s["counterpart"] = c if c in out else None
        if s["counterpart"] and s["pages_per_s"] and out[c]["pages_per_s"]:
            s["ratio"] = s["pages_per_s"] / out[c]["pages_per_s"]
        else:
            s["ratio"] = None
    return out


def verdict(s):
    """'yes (3/3)' or a loud INCOMPLETE with what was wrong."""
    n = s["runs"]
    if s["complete"]:
        text = f"yes ({n}/{n})"
        if s["items_mode"]:
            text += f", {s['items_ok_min']:,} items correct"
        return text
    what = [f"{s['complete_runs']}/{n} runs complete"]
    if s["docs_min"] != s["expected_docs"]:
        what.append(f"pages {s['docs_min']:,}/{s['expected_docs']:,}")
    if s["missing_items_max"]:
        what.append(f"missing items {s['missing_items_max']:,}")
    if s["bad_items_max"]:
        what.append(f"**bad items {s['bad_items_max']:,}**")
    return "**INCOMPLETE** (" + "; ".join(what) + ")"


def num(x, nd=0, unit=""):
    if x is None:
        return "—"
    return f"{x:,.{nd}f}{unit}"


def table(rows, versions, meta):
    agg = aggregate(rows)
    lines = []
    reps = meta.get("reps", max((s["runs"] for s in agg.values()), default=0))
    if rows:
        r0 = rows[0]
        lines.append(
            f"{r0['n']:,} pages served by nginx on 127.0.0.1 ({r0['expected_docs']:,} documents with "
            f"the start page, {r0['expected_urls']:,} URLs with the ?view=print variants); each "
            f"crawler run {reps} time{'' if reps == 1 else 's'}, in alternating order; medians.")
    m = []
    if meta.get("date"):
        m.append(meta["date"])
    if meta.get("cpus"):
        m.append(f"{meta['cpus']} CPUs" + (f" ({meta['cpu_model']})" if meta.get("cpu_model") else ""))
    if meta.get("kernel"):
        m.append(f"Linux {meta['kernel']}")
    if meta.get("kumo_args") is not None and any(p.startswith("kumo") for p in agg):
        m.append(f"KUMO_ARGS=`{meta['kumo_args']}`" if meta["kumo_args"] else "no KUMO_ARGS")
    if m:
        lines.append("Run: " + ", ".join(m) + ".")
    lines.append("")
    lines.append("| crawler | version | pages/s | × counterpart | CPU per page | peak RSS | complete |")
    lines.append("|---|---|---:|---:|---:|---:|---|")
    for peer, s in agg.items():
        desc = DESCRIPTION.get(peer, peer)
        name = f"{desc} (`{peer}`)"
        if s["ratio"] is not None:
            ratio = f"**{s['ratio']:.2f}×** {s['counterpart']}"
        elif peer in COUNTERPART.values() and any(COUNTERPART.get(p) == peer for p in agg):
            ratio = "1.00"
        else:
            ratio = "—"
        lines.append(
            f"| {name} | {versions.get(peer, '?')} | {num(s['pages_per_s'])} | {ratio} | "
            f"{num(s['cpu_us_per_page'], 0, ' µs')} | {num(s['rss_mib'], 0, ' MiB')} | {verdict(s)} |")
    lines.append("")
    lines.append("Details (medians): fetched pages, distinct URLs, CPU time (user + system) of the "
                 "crawler and of nginx's worker.")
    lines.append("")
    lines.append("| peer | runs | fetched | unique URLs | documents found | wall s | CPU s | nginx CPU s | notes |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for peer, s in agg.items():
        lines.append(
            f"| {peer} | {s['runs']} | {num(s['fetched'])} | {num(s['unique_urls'] or None)} | "
            f"{s['docs_min']:,} (min) | {num(s['wall_s'], 2)} | {num(s['cpu_s'], 2)} | "
            f"{num(s['nginx_cpu_s'], 2)} | {'; '.join(s['notes'])} |")
    redis = [(p, s) for p, s in agg.items() if s.get("redis_cpu_us_per_page") is not None]
    if redis:
        lines.append("")
        lines.append("Redis (the kumo-redis peers, medians): redis-server's own CPU (`INFO cpu`) and "
                     "commands (`INFO commandstats`) per fetched page, and its memory at the end"
                     + (f"; AOF with `appendfsync {meta['redis_appendfsync']}`."
                        if meta.get("redis_appendfsync") else "."))
        lines.append("")
        lines.append("| peer | Redis CPU per page | commands per page | of which scripts | Redis memory |")
        lines.append("|---|---:|---:|---:|---:|")
        for peer, s in redis:
            lines.append(
                f"| {peer} | {num(s['redis_cpu_us_per_page'], 1, ' µs')} | "
                f"{num(s['redis_calls_per_page'], 3)} | {num(s['redis_scripts_per_page'], 3)} | "
                f"{num(s['redis_mib'], 1, ' MiB')} |")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows, versions, meta = load(sys.argv[1])
    sys.stdout.write(table(rows, versions, meta))


if __name__ == "__main__":
    main()
