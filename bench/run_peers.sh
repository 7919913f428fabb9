#!/usr/bin/env bash
# run_peers.sh [N] — the side-by-side crawl: every peer REPS times against one local nginx.
# (bench/run.sh builds kumo, runs setup.sh, then this, then the chart; run this one directly
# when everything is already in place.)
#
# Generates the synthetic site (.work/site-N) if missing, starts nginx on 127.0.0.1:8088
# (nginx_ctl.sh), runs every peer REPS times in alternating order (forward, reverse, forward,
# ...) under `/usr/bin/time -v` and `timeout`, checks each run (check_run.py), stops nginx, and
# writes results.jsonl, versions.json, meta.json and table.md (summarize.py) into RESULTS.
#
# env:
#   REPS=3              runs per peer
#   PEERS="kumo spider-rs-noextract kumo-items kumo-items-64 spider-rs"   the peers, in this order on odd
#                       repetitions; also kumo-items-64 (64 requests at once to the host), kumo-redis
#                       and kumo-redis-2 (one and two workers sharing the crawl through a
#                       redis-server started for the run), scrapy, crawlee, wget2, wget, spider-rs-defaults
#                       (spider with its default features), crawlee-min64 (minConcurrency 64
#                       too), crawlee-mem (Crawlee's storage kept in memory)
#   KUMO_BIN            the kumo binary (default: the repository's target/release/kumo)
#   KUMO_ARGS=--fresh   extra arguments for both kumo modes
#   KUMO_REDIS_ARGS     extra arguments for the kumo-redis peers' workers (e.g. --per-host 16)
#   KUMO_SPIDER         the spider file of kumo-items (default peers/kumo/shop.toml)
#   RUN_TIMEOUT=300     seconds for one run (then killed; recorded as exit 124)
#   REDIS_APPENDFSYNC=always   the kumo-redis peers' redis-server appendfsync (everysec: as durable
#                       as kumo's default state, which is not fsynced either)
#   SIZE_KB=12 LINKS=20 generator settings (one site folder per N: delete it after changing them)
#   RESULTS=.work/results/N-<stamp>   the results folder (.work/results/latest points to it)
# All traffic goes to 127.0.0.1:8088 only.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
cd "$HERE"
N="${1:-20000}"
REPS="${REPS:-3}"
PEERS="${PEERS:-kumo spider-rs-noextract kumo-items kumo-items-64 spider-rs}"
RUN_TIMEOUT="${RUN_TIMEOUT:-300}"
REDIS_APPENDFSYNC="${REDIS_APPENDFSYNC:-always}"
SIZE_KB="${SIZE_KB:-12}"
LINKS="${LINKS:-20}"
KUMO_BIN="${KUMO_BIN:-$REPO/target/release/kumo}"
KUMO_ARGS="${KUMO_ARGS---fresh}"
KUMO_SPIDER="${KUMO_SPIDER:-$HERE/peers/kumo/shop.toml}"
W="$HERE/.work"
SITE="$W/site-$N"
URL="http://127.0.0.1:8088/index.html"
STAMP="$(date +%Y%m%d-%H%M%S)"
RESULTS="${RESULTS:-$W/results/$N-$STAMP}"
mkdir -p "$RESULTS"
RESULTS="$(cd "$RESULTS" && pwd)"
RES="$RESULTS/results.jsonl"
: > "$RES"
read -r -a P <<< "$PEERS"
read -r -a KARGS <<< "$KUMO_ARGS"
read -r -a RARGS <<< "${KUMO_REDIS_ARGS:-}"

for peer in "${P[@]}"; do
  case "$peer" in
    kumo|kumo-items|kumo-items-64|kumo-redis|kumo-redis-2) [[ -x "$KUMO_BIN" ]] || { echo "no kumo binary at $KUMO_BIN" >&2; exit 1; } ;;
  esac
done

if [[ ! -s "$SITE/manifest.json" ]]; then
  echo "generating site N=$N into $SITE" >&2
  python3 "$HERE/gen_site.py" "$SITE" -n "$N" -s "$SIZE_KB" -l "$LINKS" >&2
fi
# keep the installed Crawlee script in sync with the tracked one
if [[ -d "$W/crawlee" ]]; then cp "$HERE/peers/crawlee/crawl.mjs" "$W/crawlee/crawl.mjs"; fi

# --- what ran: versions.json and meta.json -------------------------------------------------
lock_version() {  # crate name -> its version in the spider-rs peer's Cargo.lock
  awk -v n="$1" '$1=="name" && $3=="\""n"\"" {getline; gsub(/"/, "", $3); print $3; exit}' \
    "$HERE/peers/spider_rs/Cargo.lock"
}
peer_version() {
  case "$1" in
    kumo|kumo-items|kumo-items-64|kumo-redis|kumo-redis-2)
      local v g
      v="$("$KUMO_BIN" --version 2>/dev/null | head -n1 || true)"
      g="$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo '?')"
      echo "${v:-kumo} (git $g)" ;;
    spider-rs-noextract) echo "spider $(lock_version spider)" ;;
    spider-rs|spider-rs-defaults) echo "spider $(lock_version spider), scraper $(lock_version scraper)" ;;
    scrapy) echo "Scrapy $("$W/venv/bin/pip" show scrapy 2>/dev/null | awk '$1=="Version:" {print $2}')" ;;
    crawlee|crawlee-min64|crawlee-mem)
      echo "@crawlee/cheerio $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' \
        "$W/crawlee/node_modules/@crawlee/cheerio/package.json" 2>/dev/null), node $(node --version 2>/dev/null)" ;;
    wget2) wget2 --version 2>/dev/null | head -n1 | sed 's/ - .*//' ;;
    wget) wget --version 2>/dev/null | head -n1 | sed 's/ built on.*//' ;;
    *) echo "?" ;;
  esac
}
for peer in "${P[@]}"; do printf '%s\t%s\n' "$peer" "$(peer_version "$peer")"; done \
  | python3 -c 'import json,sys; print(json.dumps(dict(l.rstrip("\n").split("\t", 1) for l in sys.stdin), indent=1))' \
  > "$RESULTS/versions.json"
N="$N" REPS="$REPS" PEERS="$PEERS" KUMO_ARGS="$KUMO_ARGS" RUN_TIMEOUT="$RUN_TIMEOUT" \
REDIS_APPENDFSYNC="$REDIS_APPENDFSYNC" python3 - "$RESULTS/meta.json" <<'EOF'
import datetime, json, os, platform, sys
e = os.environ
model = ""
try:
    with open("/proc/cpuinfo") as f:
        model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
except OSError:
    pass
with open(sys.argv[1], "w") as f:
    json.dump({
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "n": int(e["N"]), "reps": int(e["REPS"]), "peers": e["PEERS"].split(),
        "cpus": os.cpu_count(), "cpu_model": model, "kernel": platform.release(),
        "kumo_args": e["KUMO_ARGS"], "run_timeout_s": int(e["RUN_TIMEOUT"]),
        "redis_appendfsync": e["REDIS_APPENDFSYNC"],
    }, f, indent=1)
EOF

# --- nginx -------------------------------------------------------------------------------------
# warm the page cache so that the first run does not pay for disk reads
find "$SITE" -type f -exec cat {} + > /dev/null
trap '"$HERE/nginx_ctl.sh" stop >&2 || true' EXIT
"$HERE/nginx_ctl.sh" start "$SITE" >&2
NGINX_WORKER="$("$HERE/nginx_ctl.sh" worker-pid)"
CLK_TCK="$(getconf CLK_TCK)"
nginx_cpu_ticks() {  # utime + stime of nginx's worker, in clock ticks
  awk '{print $14 + $15}' "/proc/$NGINX_WORKER/stat"
}

# --- Redis, for the kumo-redis peers ----------------------------------------------------------
redis_start() {  # dir: a fresh redis-server on DIR/redis.sock (no TCP port), AOF with REDIS_APPENDFSYNC
  local d="$1"
  redis-server --port 0 --unixsocket "$d/redis.sock" --dir "$d" --save '' --appendonly yes \
    --appendfsync "$REDIS_APPENDFSYNC" --daemonize yes --pidfile "$d/redis.pid" --logfile "$d/redis.log"
  for _ in $(seq 1 100); do
    redis-cli -s "$d/redis.sock" ping 2>/dev/null | grep -q PONG && return 0
    sleep 0.05
  done
  echo "redis-server did not start (see $d/redis.log)" >&2
  return 1
}
redis_stop() {  # dir: writes DIR/redis.json (its CPU, commands, memory), then stops it
  local d="$1"
  { redis-cli -s "$d/redis.sock" info cpu; redis-cli -s "$d/redis.sock" info commandstats
    redis-cli -s "$d/redis.sock" info memory; } | python3 -c '
import json, sys
cpu = calls = scripts = mem = 0
for line in sys.stdin:
    k, _, v = line.strip().partition(":")
    if k in ("used_cpu_sys", "used_cpu_user"):
        cpu += float(v)
    elif k.startswith("cmdstat_"):
        n = int(dict(x.split("=") for x in v.split(","))["calls"])
        calls += n
        if k in ("cmdstat_evalsha", "cmdstat_eval", "cmdstat_fcall"):
            scripts += n
    elif k == "used_memory":
        mem = int(v)
print(json.dumps({"redis_cpu_s": round(cpu, 3), "redis_calls": calls, "redis_scripts": scripts,
                  "redis_used_memory": mem}))' > "$d/redis.json"
  redis-cli -s "$d/redis.sock" shutdown nosave >/dev/null 2>&1 || true
  rm -f "$d/appendonly.aof" "$d"/appendonlydir/* 2>/dev/null || true
}

# --- one run -----------------------------------------------------------------------------------
run_one() {  # peer rep
  local peer="$1" rep="$2"
  local out="$W/out/$N/$peer/$rep"
  rm -rf "$out"; mkdir -p "$out"
  local cmd=() envs=() extra=()
  case "$peer" in
    kumo)
      # page records: links followed, one JSON record per page; robots.txt fetched and obeyed
      cmd=("$KUMO_BIN" crawl "$URL" -o "$out/items.jsonl" --concurrency 64 --no-progress
           --summary-json "$out/summary.json" "${KARGS[@]}")
      extra=(--jsonl "$out/items.jsonl" --kumo-summary "$out/summary.json") ;;
    kumo-items|kumo-items-64)
      # the product model as a kumo spider file, its items written to this run's folder;
      # kumo-items-64 with 64 requests at once to the one host, as the peers run
      local per_host=()
      [[ "$peer" == kumo-items-64 ]] && per_host=(-e "s#^per_host = .*#per_host = 64#")
      sed -e "s#^output = .*#output = { jsonl = \"$out/items.jsonl\" }#" "${per_host[@]}" "$KUMO_SPIDER" > "$out/spider.toml"
      cmd=("$KUMO_BIN" crawl "$out/spider.toml" --seed-base "${URL%/index.html}" --no-progress
           --summary-json "$out/summary.json" "${KARGS[@]}")
      extra=(--items --jsonl "$out/items.jsonl" --kumo-summary "$out/summary.json") ;;
    kumo-redis|kumo-redis-2)
      # the page-records crawl of `kumo`, by one or two workers sharing it through a
      # redis-server of this run's own (AOF, appendfsync $REDIS_APPENDFSYNC; always: nothing acknowledged is lost)
      # each worker on its share of the machine's CPUs (--threads), as the README advises
      local workers=1
      [[ "$peer" == kumo-redis-2 ]] && workers=2
      local threads=$(( $(nproc) / workers ))
      (( threads < 1 )) && threads=1
      redis_start "$out"
      cmd=(bash -c 'n=$1 bin=$2 url=$3 dir=$4; shift 4; for i in $(seq 1 "$n"); do "$bin" crawl "$url" --redis "redis+unix://$dir/redis.sock" \
             -o "$dir/items-$i.jsonl" --worker "w$i" --concurrency 64 --no-progress "$@" & done; wait' \
           workers "$workers" "$KUMO_BIN" "$URL" "$out" --threads "$threads" "${RARGS[@]}")
      extra=(--jsonl "$out/items.jsonl" --extra-json "$out/redis.json") ;;
    spider-rs|spider-rs-noextract|spider-rs-defaults)
      local target=target-spider-lean
      [[ "$peer" == spider-rs-defaults ]] && target="target-spider-defaults"
      cmd=("$W/$target/release/spiderbench" "$URL" "$out/items.jsonl" "$out/stats.json")
      envs=(CONCURRENCY=64)
      extra=(--jsonl "$out/items.jsonl" --stats "$out/stats.json")
      if [[ "$peer" == spider-rs-noextract ]]; then envs+=(EXTRACT=0); else extra+=(--items); fi ;;
    scrapy)
      cmd=("$W/venv/bin/scrapy" runspider "$HERE/peers/scrapy/bench_spider.py"
           -a "start=$URL" -a "stats=$out/stats.json" -O "$out/items.jsonl")
      extra=(--items --jsonl "$out/items.jsonl" --stats "$out/stats.json") ;;
    crawlee|crawlee-min64|crawlee-mem)
      cmd=(node "$W/crawlee/crawl.mjs" "$URL" "$out/items.jsonl" "$out/stats.json")
      envs=(CRAWLEE_STORAGE_DIR="$out/storage" CRAWLEE_PURGE_ON_START=true MAX_CONCURRENCY=64)
      [[ "$peer" == crawlee-min64 ]] && envs+=(MIN_CONCURRENCY=64)
      [[ "$peer" == crawlee-mem ]] && envs+=(CRAWLEE_PERSIST_STORAGE=false)
      extra=(--items --jsonl "$out/items.jsonl" --stats "$out/stats.json"
             --dataset "$out/storage/datasets/default") ;;
    wget2)
      cmd=(wget2 -r -l 0 --robots=off --max-threads=64 --tries=1 --timeout=30 -q
           --user-agent=wget2bench -P "$out/mirror" "$URL")
      extra=(--mirror "$out/mirror") ;;
    wget)
      cmd=(wget -r -l inf -e robots=off --tries=1 --timeout=30 -q
           --user-agent=wgetbench -P "$out/mirror" "$URL")
      extra=(--mirror "$out/mirror") ;;
    *) echo "unknown peer $peer" >&2; return 1 ;;
  esac
  local t0 t1 rc=0 ngx
  t0="$(nginx_cpu_ticks)"
  ( cd "$out" && env "${envs[@]}" /usr/bin/time -v -o "$out/time.txt" \
      timeout -k 10 "$RUN_TIMEOUT" "${cmd[@]}" > "$out/stdout.log" 2> "$out/stderr.log" ) || rc=$?
  t1="$(nginx_cpu_ticks)"
  if [[ "$peer" == kumo-redis* ]]; then
    cat "$out"/items-*.jsonl > "$out/items.jsonl" 2>/dev/null || true
    redis_stop "$out"
  fi
  ngx="$(awk -v a="$t0" -v b="$t1" -v h="$CLK_TCK" 'BEGIN{printf "%.2f", (b-a)/h}')"
  python3 "$HERE/check_run.py" --manifest "$SITE/manifest.json" --expected "$SITE/expected_items.jsonl" \
    --peer "$peer" --rep "$rep" --time "$out/time.txt" --rc "$rc" --nginx-cpu "$ngx" "${extra[@]}" \
    | tee -a "$RES" >&2
  # keep disk use bounded: drop mirrors, Crawlee's storage and kumo's state; keep logs and output
  rm -rf "$out/mirror" "$out/storage" "$out/.kumo"
}

for rep in $(seq 1 "$REPS"); do
  if (( rep % 2 == 1 )); then
    order=("${P[@]}")
  else
    order=(); for ((i = ${#P[@]} - 1; i >= 0; i--)); do order+=("${P[$i]}"); done
  fi
  for peer in "${order[@]}"; do
    echo "== N=$N rep $rep/$REPS: $peer" >&2
    run_one "$peer" "$rep"
  done
done

python3 "$HERE/summarize.py" "$RESULTS" > "$RESULTS/table.md"
ln -sfn "$RESULTS" "$W/results/latest" 2>/dev/null || true
cat "$RESULTS/table.md"
echo "results: $RESULTS" >&2
