#!/usr/bin/env bash
# run.sh [N] — the whole side-by-side benchmark in one command, from a clone of the repository:
# builds kumo (cargo build --release --locked), installs or builds the peers that are missing
# (setup.sh), crawls an N-page local site (default 20000) with each peer REPS times
# (run_peers.sh), and writes table.md, results.jsonl and chart.svg into the results folder
# (bench/.work/results/N-<stamp>, also bench/.work/results/latest).
#
# env (see bench/README.md):
#   PEERS="kumo spider-rs-noextract kumo-items kumo-items-64 spider-rs"   REPS=3   KUMO_ARGS=--fresh
#   RUN_TIMEOUT=300 (seconds per run)   KUMO_BIN (a kumo binary to use instead of building one)
#   PUBLISH=1  also copies table.md and chart.svg to docs/bench/
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
N="${1:-20000}"
[[ "$N" =~ ^[0-9]+$ ]] || { echo "usage: $0 [N]   (N: pages of the site, default 20000)" >&2; exit 2; }
export PEERS="${PEERS:-kumo spider-rs-noextract kumo-items kumo-items-64 spider-rs}"
export REPS="${REPS:-3}"
export KUMO_ARGS="${KUMO_ARGS---fresh}"
read -r -a P <<< "$PEERS"

wants_kumo=0
for p in "${P[@]}"; do [[ "$p" == kumo* ]] && wants_kumo=1; done
if ((wants_kumo)); then
  if [[ -n "${KUMO_BIN:-}" ]]; then
    echo "run: using KUMO_BIN=$KUMO_BIN (not building)" >&2
  else
    echo "run: cargo build --release --locked (kumo)" >&2
    (cd "$REPO" && cargo build --release --locked --bin kumo)
    export KUMO_BIN="$REPO/target/release/kumo"
  fi
fi

if ! missing="$("$HERE/setup.sh" --check "${P[@]}")"; then
  echo "run: $missing; running setup.sh" >&2
  "$HERE/setup.sh" "${P[@]}"
fi

export RESULTS="${RESULTS:-$HERE/.work/results/$N-$(date +%Y%m%d-%H%M%S)}"
"$HERE/run_peers.sh" "$N"
python3 "$HERE/chart.py" "$RESULTS"
echo "chart: $RESULTS/chart.svg" >&2

if [[ "${PUBLISH:-0}" == 1 ]]; then
  mkdir -p "$REPO/docs/bench"
  cp "$RESULTS/table.md" "$RESULTS/chart.svg" "$REPO/docs/bench/"
  echo "published: docs/bench/table.md, docs/bench/chart.svg" >&2
fi
