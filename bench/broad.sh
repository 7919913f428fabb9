#!/usr/bin/env bash
# broad.sh [HOSTS] [MAX_PAGES] — the broad-crawl benchmark: kumo and Scrapy on a synthetic web of
# HOSTS host names (default 100000) on ADDRESSES loopback addresses (default 2000), with its own
# DNS server, each crawl stopped after MAX_PAGES pages (default 300000). Beside them, kumo on one
# host with the same page bound, as a baseline of the same machine in the same run.
#
# Builds kumo (cargo build --release --locked) unless KUMO_BIN is given, makes Scrapy's venv
# (setup.sh scrapy) if it is missing, then for every repetition and peer: starts a fresh test
# site (`kumo testsite --web … --web-judge` for the broad peers, `kumo testsite --pages` for
# kumo-single), runs the peer under `/usr/bin/time -v` and `timeout`, stops the site with SIGINT
# (the site then writes its judge's verdict) and records one line in results.jsonl. Writes
# results.jsonl, meta.json, versions.json, table.md (broad_summary.py) and chart.svg
# (broad_chart.py) into bench/.work/broad/<stamp>/ (bench/.work/broad/latest links to it).
#
# env (see bench/README.md, "Broad crawls"):
#   ADDRESSES=2000  REPS=1  RUN_TIMEOUT=1800 (seconds per run)  WEB_SEED=1
#   SEEDS=HOSTS  start URLs (a broad crawl starts from a long list of hosts)
#   EVEN_ADDRESSES=1  names spread evenly over the addresses (0: Zipf-skewed, as shared hosting)
#   PEERS="kumo-single kumo-broad scrapy-broad"  (their order on odd repetitions)
#   KUMO_BIN   a kumo binary to use instead of building one
#   KUMO_ARGS  extra arguments for both kumo peers
#   JUDGE_DELAY=1s JUDGE_PER_HOST=1 JUDGE_PER_IP=1 JUDGE_IP_DELAY=100ms  the judge's rules (kumo
#              --broad's promises); JUDGE_ARGS extra testsite arguments
#   RESULTS=.work/broad/HOSTS-MAX_PAGES-<stamp>
#   SITE_START_TIMEOUT=600 SITE_STOP_TIMEOUT=600  seconds for a test site to print its addresses,
#              and to exit after SIGINT (judging a long request log takes a while)
# All traffic stays on loopback (127.0.0.1 and 127.77.x.y).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
HOSTS="${1:-100000}"
MAX_PAGES="${2:-300000}"
usage="usage: $0 [HOSTS] [MAX_PAGES]   (defaults 100000 and 300000)"
[[ "$HOSTS" =~ ^[0-9]+$ && "$MAX_PAGES" =~ ^[0-9]+$ ]] || { echo "$usage" >&2; exit 2; }
ADDRESSES="${ADDRESSES:-2000}"
REPS="${REPS:-1}"
RUN_TIMEOUT="${RUN_TIMEOUT:-1800}"
WEB_SEED="${WEB_SEED:-1}"
SEEDS="${SEEDS:-$HOSTS}"  # start URLs: the index pages of the most popular hosts (all, by default)
EVEN_ADDRESSES="${EVEN_ADDRESSES:-1}"  # 1: names spread evenly over the addresses; 0: Zipf-skewed
even=(); [[ "$EVEN_ADDRESSES" == 1 ]] && even=(--web-even-addresses)
PEERS="${PEERS:-kumo-single kumo-broad scrapy-broad}"
JUDGE_DELAY="${JUDGE_DELAY:-1s}"
JUDGE_PER_HOST="${JUDGE_PER_HOST:-1}"
JUDGE_PER_IP="${JUDGE_PER_IP:-1}"
JUDGE_IP_DELAY="${JUDGE_IP_DELAY:-100ms}"
SITE_START_TIMEOUT="${SITE_START_TIMEOUT:-600}"  # a large web takes a while to build
SITE_STOP_TIMEOUT="${SITE_STOP_TIMEOUT:-600}"    # and to judge a long request log
W="$HERE/.work"
read -r -a P <<< "$PEERS"
read -r -a KARGS <<< "${KUMO_ARGS:-}"
read -r -a JARGS <<< "${JUDGE_ARGS:-}"
for p in "${P[@]}"; do
  case "$p" in kumo-single|kumo-broad|scrapy-broad) ;; *) echo "broad.sh: unknown peer '$p'" >&2; exit 2 ;; esac
done

# --- kumo and Scrapy ---------------------------------------------------------------------------
if [[ -n "${KUMO_BIN:-}" ]]; then
  echo "broad: using KUMO_BIN=$KUMO_BIN (not building)" >&2
else
  echo "broad: cargo build --release --locked (kumo)" >&2
  (cd "$REPO" && cargo build --release --locked --bin kumo)
  KUMO_BIN="$REPO/target/release/kumo"
fi
[[ -x "$KUMO_BIN" ]] || { echo "broad: no kumo binary at $KUMO_BIN" >&2; exit 1; }
KUMO_BIN="$(cd "$(dirname "$KUMO_BIN")" && pwd)/$(basename "$KUMO_BIN")"
[[ -x /usr/bin/time ]] || { echo "broad: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }
if [[ " ${P[*]} " == *" scrapy-broad "* && ! -x "$W/venv/bin/scrapy" ]]; then
  "$HERE/setup.sh" scrapy
fi

# The judge (--web-judge) is newer than the synthetic web: without it, violations are unknown.
JUDGE=0
if "$KUMO_BIN" testsite --help 2>/dev/null | grep -q -- '--web-judge'; then
  JUDGE=1
else
  echo "broad: this kumo's testsite has no --web-judge: politeness violations will be unknown" >&2
fi

STAMP="$(date +%Y%m%d-%H%M%S)"
RESULTS="${RESULTS:-$W/broad/$HOSTS-$MAX_PAGES-$STAMP}"
mkdir -p "$RESULTS"
RESULTS="$(cd "$RESULTS" && pwd)"
RES="$RESULTS/results.jsonl"
: > "$RES"

# --- what ran: versions.json and meta.json -------------------------------------------------
{
  v="$("$KUMO_BIN" --version 2>/dev/null | head -n1 || true)"
  g="$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo '?')"
  printf 'kumo\t%s (git %s)\n' "${v:-kumo}" "$g"
  if [[ -x "$W/venv/bin/python" ]]; then
    printf 'scrapy\tScrapy %s, Twisted %s\n' \
      "$("$W/venv/bin/python" -c 'import scrapy; print(scrapy.__version__)' 2>/dev/null || echo '?')" \
      "$("$W/venv/bin/python" -c 'import twisted; print(twisted.__version__)' 2>/dev/null || echo '?')"
  fi
} | python3 -c 'import json,sys; print(json.dumps(dict(l.rstrip("\n").split("\t", 1) for l in sys.stdin), indent=1))' \
  > "$RESULTS/versions.json"
HOSTS="$HOSTS" ADDRESSES="$ADDRESSES" MAX_PAGES="$MAX_PAGES" WEB_SEED="$WEB_SEED" REPS="$REPS" \
PEERS="$PEERS" RUN_TIMEOUT="$RUN_TIMEOUT" KUMO_ARGS="${KUMO_ARGS:-}" JUDGE="$JUDGE" \
JUDGE_RULES="--judge-delay $JUDGE_DELAY --judge-per-host $JUDGE_PER_HOST --judge-per-ip $JUDGE_PER_IP --judge-ip-delay $JUDGE_IP_DELAY ${JUDGE_ARGS:-}" \
python3 - "$RESULTS/meta.json" <<'EOF'
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
        "hosts": int(e["HOSTS"]), "addresses": int(e["ADDRESSES"]), "max_pages": int(e["MAX_PAGES"]),
        "web_seed": int(e["WEB_SEED"]), "reps": int(e["REPS"]), "peers": e["PEERS"].split(),
        "run_timeout_s": int(e["RUN_TIMEOUT"]), "kumo_args": e["KUMO_ARGS"],
        "judge": e["JUDGE_RULES"].strip() if e["JUDGE"] == "1" else None,
        "cpus": os.cpu_count(), "cpu_model": model, "kernel": platform.release(),
    }, f, indent=1)
EOF

# --- the test site -----------------------------------------------------------------------------
SITE_PID=""
site_start() {  # dir lines-to-wait-for testsite-args...: starts it, waits for its first lines
  local d="$1" lines="$2"; shift 2
  : > "$d/site.stdout"
  "$KUMO_BIN" testsite "$@" > "$d/site.stdout" 2> "$d/site.stderr" &
  SITE_PID=$!
  local deadline=$((SECONDS + SITE_START_TIMEOUT))
  while (( $(wc -l < "$d/site.stdout") < lines )); do
    if ! kill -0 "$SITE_PID" 2>/dev/null || (( SECONDS > deadline )); then
      echo "broad: the test site did not start (see $d/site.stderr)" >&2
      site_stop; return 1
    fi
    sleep 0.2
  done
}
site_stop() {  # SIGINT, then wait for it to exit (it writes the judge's verdict first)
  [[ -n "$SITE_PID" ]] || return 0
  kill -INT "$SITE_PID" 2>/dev/null || true
  local deadline=$((SECONDS + SITE_STOP_TIMEOUT))
  while kill -0 "$SITE_PID" 2>/dev/null; do
    if (( SECONDS > deadline )); then
      echo "broad: the test site did not stop in ${SITE_STOP_TIMEOUT}s; killing it" >&2
      kill -KILL "$SITE_PID" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  wait "$SITE_PID" 2>/dev/null || true
  SITE_PID=""
}
trap site_stop EXIT
CLK_TCK="$(getconf CLK_TCK)"
site_cpu_ticks() {  # utime + stime of the test site
  awk '{print $14 + $15}' "/proc/$SITE_PID/stat" 2>/dev/null || echo 0
}

no_site() {  # peer rep: the row of a run that could not start
  python3 "$HERE/broad_summary.py" row --peer "$1" --rep "$2" --rc -1 --note "the test site did not start" \
    | tee -a "$RES" >&2
}

# --- one run -----------------------------------------------------------------------------------
run_one() {  # peer rep
  local peer="$1" rep="$2"
  local out="$RESULTS/runs/$rep-$peer"
  rm -rf "$out"; mkdir -p "$out"
  local cmd=() extra=()
  if [[ "$peer" == kumo-single ]]; then
    site_start "$out" 1 --pages "$MAX_PAGES" --no-record || { no_site "$peer" "$rep"; return 0; }
    local base
    base="$(head -n1 "$out/site.stdout")"
    cmd=("$KUMO_BIN" crawl "$base" --max-pages "$MAX_PAGES" --state "$out/state" --fresh
         -o "$out/out.jsonl" --no-progress --summary-json "$out/summary.json" "${KARGS[@]}")
    extra=(--kumo-summary "$out/summary.json")
  else
    local judge=()
    ((JUDGE)) && judge=(--web-judge "$out/judge.json" --judge-delay "$JUDGE_DELAY"
                        --judge-per-host "$JUDGE_PER_HOST" --judge-per-ip "$JUDGE_PER_IP"
                        --judge-ip-delay "$JUDGE_IP_DELAY" "${JARGS[@]}")
    site_start "$out" 2 --web "$HOSTS" --web-addresses "$ADDRESSES" --web-seed "$WEB_SEED" \
      --web-seeds "$SEEDS" "${even[@]}" "${judge[@]}" \
      || { no_site "$peer" "$rep"; return 0; }
    local seeds dns
    seeds="$(sed -n 1p "$out/site.stdout")"
    dns="$(sed -n 2p "$out/site.stdout")"
    read -r -a S <<< "$seeds"
    printf '%s\n' "${S[@]}" > "$out/seeds.txt"
    if [[ "$peer" == kumo-broad ]]; then
      cmd=("$KUMO_BIN" crawl --broad --dns-server "$dns" --max-pages "$MAX_PAGES" --state "$out/state"
           --fresh -o "$out/out.jsonl" --no-progress --summary-json "$out/summary.json" "${KARGS[@]}"
           --seeds-file "$out/seeds.txt")
      extra=(--kumo-summary "$out/summary.json")
    else
      # the resolver, its server and the thread pool are the process's settings: -s, not the spider's
      cmd=("$W/venv/bin/scrapy" runspider "$HERE/peers/scrapy/broad_spider.py"
           -a "seeds_file=$out/seeds.txt" -a "stats=$out/stats.json"
           -s TWISTED_DNS_RESOLVER=broad_spider.WebResolver -s "BROAD_DNS_SERVER=$dns"
           -s REACTOR_THREADPOOL_MAXSIZE=20 -s "CLOSESPIDER_ITEMCOUNT=$MAX_PAGES" -O "$out/out.jsonl")
      extra=(--stats "$out/stats.json")
    fi
    extra+=(--judge "$out/judge.json")  # absent without a judge: violations unknown
  fi
  local t0 t1 rc=0
  t0="$(site_cpu_ticks)"
  ( cd "$out" && /usr/bin/time -v -o "$out/time.txt" \
      timeout -s INT -k 60 "$RUN_TIMEOUT" "${cmd[@]}" > "$out/stdout.log" 2> "$out/stderr.log" ) || rc=$?
  t1="$(site_cpu_ticks)"
  site_stop
  python3 "$HERE/broad_summary.py" row --peer "$peer" --rep "$rep" --time "$out/time.txt" --rc "$rc" \
    --jsonl "$out/out.jsonl" --site-cpu "$(awk -v a="$t0" -v b="$t1" -v h="$CLK_TCK" 'BEGIN{printf "%.2f", (b-a)/h}')" \
    "${extra[@]}" | tee -a "$RES" >&2
  rm -rf "$out/state"  # kumo's crawl state: bounded disk use; logs and outputs are kept
}

for rep in $(seq 1 "$REPS"); do
  if (( rep % 2 == 1 )); then
    order=("${P[@]}")
  else
    order=(); for ((i = ${#P[@]} - 1; i >= 0; i--)); do order+=("${P[$i]}"); done
  fi
  for peer in "${order[@]}"; do
    echo "== broad $HOSTS hosts, $MAX_PAGES pages, rep $rep/$REPS: $peer" >&2
    run_one "$peer" "$rep"
  done
done

python3 "$HERE/broad_summary.py" table "$RESULTS" > "$RESULTS/table.md"
python3 "$HERE/broad_chart.py" "$RESULTS"
ln -sfn "$RESULTS" "$W/broad/latest" 2>/dev/null || true
cat "$RESULTS/table.md"
echo "results: $RESULTS (chart: $RESULTS/chart.svg)" >&2
