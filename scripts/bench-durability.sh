#!/usr/bin/env bash
# Durability's cost: `kumo bench` in memory and `kumo bench --durable` (embedded store, page
# records journaled and checkpointed into a file, as `kumo crawl` runs by default), run
# alternately ROUNDS times on the same machine; prints each run and the ratio of the medians.
#
#   scripts/bench-durability.sh [PAGES] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
pages=${1:-20000}
rounds=${2:-3}
cargo build --release --quiet
kumo=target/release/kumo
mem=() dur=()
for ((i = 1; i <= rounds; i++)); do
  for mode in memory durable; do
    flag=(); [[ $mode == durable ]] && flag=(--durable)
    out=$("$kumo" --quiet bench --pages "$pages" "${flag[@]}")
    rate=$(awk '/^pages\/s:/ {print $2}' <<<"$out")
    cpu=$(awk '/^cpu\/page:/ {print $2}' <<<"$out")
    rss=$(awk '/^peak memory:/ {print $3}' <<<"$out")
    printf '%-8s round %d: %7s pages/s  %6s µs CPU/page  %6s MiB peak\n' "$mode" "$i" "$rate" "$cpu" "$rss"
    if [[ $mode == memory ]]; then mem+=("$rate"); else dur+=("$rate"); fi
  done
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
m=$(median "${mem[@]}") d=$(median "${dur[@]}")
awk -v m="$m" -v d="$d" 'BEGIN {printf "median pages/s: memory %d, durable %d: durable keeps %.0f%%\n", m, d, 100*d/m}'
