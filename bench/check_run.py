#!/usr/bin/env python3
"""Verify one peer run and print one JSON result line (appended to results.jsonl by run_peers.sh).

usage: check_run.py --manifest SITE/manifest.json --expected SITE/expected_items.jsonl
                    --peer NAME --rep R --time TIME_V_FILE --rc RC [--items]
                    [--jsonl OUT.jsonl] [--mirror DIR] [--dataset DIR]
                    [--stats STATS.json] [--kumo-summary SUMMARY.json] [--nginx-cpu SECONDS]

What it counts:
  fetched      pages the peer fetched: kumo's own count (--kumo-summary), else the lines of its
               JSONL (or the files of a wget mirror, or of a Crawlee dataset folder)
  unique_urls  distinct fetched URLs (fragment stripped)
  docs         distinct documents found: /index.html and /page/K.html, query ignored (the
               known SKUs of the items, right or wrong, when the peer's rows carry no URL)
  offhost      fetched URLs not on the site's host
  non200       rows with a status other than 200
With --items (the peer extracts the product of every page):
  items_ok     distinct SKUs whose sku, title and price equal the generator's ground truth
  bad_items    rows whose sku is unknown, or whose title or price differ, or that lack a sku
  missing_items  expected SKUs never seen in a correct row
  dup_items    rows beyond the first for one SKU (Scrapy-like peers may fetch ?view=print
               variants and emit the same product again: counted, not an error)
complete_pages is docs == expected; complete_items is missing_items == 0 and bad_items == 0;
complete is both (complete_pages alone without --items).
"""
import argparse
import json
import os
import re
from urllib.parse import urldefrag, urlsplit

SKU_RE = re.compile(rb'<span class="sku">(SKU-\d+)</span>')
DOC_RE = re.compile(r"^/(index\.html|page/\d+\.html)$")


def parse_time_v(path):
    """The fields of GNU time -v that the table uses."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if ":" not in line:
                continue
            if line.startswith("Elapsed"):
                k, _, v = line.rpartition(": ")
            else:
                k, _, v = line.partition(": ")
            k, v = k.strip(), v.strip()
            if k.startswith("User time"):
                out["user_s"] = float(v)
            elif k.startswith("System time"):
                out["sys_s"] = float(v)
            elif k.startswith("Elapsed (wall clock)"):
                s = 0.0
                for part in v.split(":"):
                    s = s * 60 + float(part)
                out["wall_s"] = s
            elif k.startswith("Maximum resident set size"):
                out["maxrss_kb"] = int(v)
            elif k.startswith("Exit status"):
                out["exit_status"] = int(v)
    return out


def read_jsonl(path):
    rows, broken = [], 0
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                broken += 1  # a run killed mid-write
    return rows, broken


def kumo_fetched(path):
    """Responses received by this run, from `kumo crawl --summary-json` (one summary, or one
    per site for a spider file)."""
    with open(path) as f:
        s = json.load(f)
    if "pages_this_run" in s:
        return s["pages_this_run"]
    return sum(v.get("pages_this_run", 0) for v in s.values() if isinstance(v, dict))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--peer", required=True)
    ap.add_argument("--rep", type=int, required=True)
    ap.add_argument("--time", required=True)
    ap.add_argument("--rc", type=int, required=True)
    ap.add_argument("--items", action="store_true", help="the peer extracts items: check them")
    ap.add_argument("--jsonl")
    ap.add_argument("--mirror")
    ap.add_argument("--dataset")
    ap.add_argument("--stats")
    ap.add_argument("--kumo-summary")
    ap.add_argument("--nginx-cpu", type=float)
    ap.add_argument("--extra-json", help="a JSON object merged into the result (the Redis figures)")
    a = ap.parse_args()

    with open(a.manifest) as f:
        man = json.load(f)
    host = man["host"]
    expected = {}
    with open(a.expected) as f:
        for line in f:
            it = json.loads(line)
            expected[it["sku"]] = it

    res = {"peer": a.peer, "rep": a.rep, "rc": a.rc, "n": man["pages"], "items_mode": a.items,
           "expected_docs": man["expected_docs"], "expected_urls": man["expected_urls"]}
    res.update(parse_time_v(a.time))
    if a.nginx_cpu is not None:
        res["nginx_cpu_s"] = round(a.nginx_cpu, 2)
    if a.extra_json and os.path.exists(a.extra_json):
        with open(a.extra_json) as f:
            res.update(json.load(f))

    rows = []
    if a.jsonl and os.path.exists(a.jsonl) and os.path.getsize(a.jsonl) > 0:
        rows, broken = read_jsonl(a.jsonl)
        res["source"] = "jsonl"
        if broken:
            res["broken_lines"] = broken
    elif a.dataset and os.path.isdir(a.dataset):
        # Crawlee's dataset folder (when the run was killed before it wrote its JSONL)
        for fn in sorted(os.listdir(a.dataset)):
            if fn.endswith(".json") and fn[0].isdigit():
                with open(os.path.join(a.dataset, fn)) as f:
                    rows.append(json.load(f))
        res["source"] = "crawlee-dataset-dir"

    fetched = 0
    urls, doc_paths, skus_ok, skus_seen = set(), set(), set(), set()
    offhost = non200 = bad = dup = 0
    for r in rows:
        fetched += 1
        u = urldefrag(r.get("url") or "")[0]
        status = r.get("status")
        if status not in (None, 200):
            non200 += 1
        if u:  # kumo's item rows carry no URL
            urls.add(u)
            parts = urlsplit(u)
            if parts.netloc != host:
                offhost += 1
            elif status in (None, 200) and DOC_RE.match(parts.path):
                doc_paths.add(parts.path)
        if a.items:
            sku = r.get("sku")
            e = expected.get(sku) if sku else None
            if e is None or e["title"] != r.get("title") or e["price"] != r.get("price"):
                bad += 1
            elif sku in skus_ok:
                dup += 1
            else:
                skus_ok.add(sku)
            if sku:
                skus_seen.add(sku)

    if a.mirror and os.path.isdir(a.mirror):
        res["source"] = "mirror"
        host_dirs = (host, host.split(":")[0], host.replace(":", "%3A"))
        for root, _, files in os.walk(a.mirror):
            for fn in files:
                p = os.path.join(root, fn)
                fetched += 1
                rel = os.path.relpath(p, a.mirror)
                urls.add(rel)
                top, _, path = rel.partition(os.sep)
                if top not in host_dirs:
                    offhost += 1
                    continue
                path = "/" + path.replace(os.sep, "/").split("?", 1)[0]
                if DOC_RE.match(path):
                    with open(p, "rb") as f:
                        if SKU_RE.search(f.read()):
                            doc_paths.add(path)

    if a.kumo_summary and os.path.exists(a.kumo_summary):
        try:
            res["rows"] = fetched
            fetched = kumo_fetched(a.kumo_summary)
        except (OSError, ValueError, AttributeError) as e:
            res["kumo_summary_error"] = str(e)

    docs = len(doc_paths) if doc_paths or not a.items else len(skus_seen & expected.keys())
    res.update({
        "fetched": fetched,
        "unique_urls": len(urls),
        "docs": docs,
        "offhost": offhost,
        "non200": non200,
        "complete_pages": docs == man["expected_docs"],
        "all_urls": len(urls) == man["expected_urls"],
    })
    if a.items:
        missing = sum(1 for s in expected if s not in skus_ok)
        res.update({
            "items_ok": len(skus_ok),
            "bad_items": bad,
            "missing_items": missing,
            "dup_items": dup,
            "complete_items": missing == 0 and bad == 0,
        })
        res["complete"] = res["complete_pages"] and res["complete_items"]
    else:
        res["complete"] = res["complete_pages"]

    if a.stats and os.path.exists(a.stats):
        try:
            with open(a.stats) as f:
                st = json.load(f)
            keep = ("lagged_dropped", "links_visited", "crawl_seconds", "spider_seconds", "failed",
                    "item_scraped_count", "downloader/request_count", "reason")
            res["peer_stats"] = {k: st[k] for k in keep if k in st}
        except (OSError, ValueError) as e:
            res["peer_stats_error"] = str(e)
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main()
