#!/usr/bin/env bash
# setup.sh [--check] [PEER...] — install or build what the given peers need (every peer when
# none is named), into bench/.work/ where it can. Idempotent: what is there is left alone.
#
#   system (Debian packages, apt-get; needs root): nginx, curl, time — always; wget2 for wget2,
#       wget for wget, nodejs + npm for crawlee, python3-venv when python3 has no venv module
#   scrapy:     a venv in .work/venv with Scrapy (version pinned below)
#   crawlee:    .work/crawlee with @crawlee/cheerio (version pinned in peers/crawlee/package.json)
#   spider-rs:  peers/spider_rs built with its tracked Cargo.lock into .work/target-spider-lean
#               (spider-rs-defaults: spider's default features, into .work/target-spider-defaults)
#   kumo:       nothing here (run.sh builds the repository's kumo)
#
# --check installs nothing: it prints what is missing and exits 1 if anything is.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
W="$HERE/.work"
SCRAPY_VERSION="2.19.0"

check=0
if [[ "${1:-}" == --check ]]; then check=1; shift; fi
peers=("$@")
((${#peers[@]})) || peers=(kumo kumo-items kumo-items-64 spider-rs spider-rs-noextract scrapy crawlee wget2 wget)

have() { command -v "$1" >/dev/null 2>&1; }
missing=()
apt_pkgs=()
need_cmd() {  # command debian-package
  if ! have "$1"; then missing+=("$1"); apt_pkgs+=("$2"); fi
}

need_cmd nginx nginx
need_cmd curl curl
need_cmd timeout coreutils
[[ -x /usr/bin/time ]] || { missing+=(/usr/bin/time); apt_pkgs+=(time); }

want_scrapy=0 want_crawlee=0 want_spider=0 want_spider_defaults=0
for p in "${peers[@]}"; do
  case "$p" in
    kumo|kumo-items|kumo-items-64) ;;
    kumo-redis|kumo-redis-2) need_cmd redis-server redis-server; need_cmd redis-cli redis-tools ;;
    spider-rs|spider-rs-noextract) want_spider=1 ;;
    spider-rs-defaults) want_spider_defaults=1 ;;
    scrapy) want_scrapy=1 ;;
    crawlee|crawlee-min64|crawlee-mem) want_crawlee=1 ;;
    wget2) need_cmd wget2 wget2 ;;
    wget) need_cmd wget wget ;;
    *) echo "setup.sh: unknown peer '$p'" >&2; exit 2 ;;
  esac
done

if ((want_scrapy)); then
  if [[ ! -x "$W/venv/bin/scrapy" ]]; then
    missing+=(scrapy)
    python3 -c 'import ensurepip, venv' 2>/dev/null || apt_pkgs+=(python3-venv)
  fi
fi
if ((want_crawlee)); then
  need_cmd node nodejs
  need_cmd npm npm
  [[ -f "$W/crawlee/node_modules/@crawlee/cheerio/package.json" ]] || missing+=(crawlee)
fi
# A spider-rs build is missing when its binary is absent or older than its sources.
spider_stale() {  # target-dir
  local bin="$1/release/spiderbench" src
  [[ -x "$bin" ]] || return 0
  for src in Cargo.toml Cargo.lock src/main.rs; do
    [[ "$HERE/peers/spider_rs/$src" -nt "$bin" ]] && return 0
  done
  return 1
}
if ((want_spider)) && spider_stale "$W/target-spider-lean"; then missing+=(spider-rs); fi
if ((want_spider_defaults)) && spider_stale "$W/target-spider-defaults"; then missing+=(spider-rs-defaults); fi
if ((want_spider || want_spider_defaults)) && ! have cargo; then
  echo "setup.sh: spider-rs needs cargo (a Rust toolchain)" >&2; exit 1
fi

if ((check)); then
  if ((${#missing[@]})); then echo "missing: ${missing[*]}"; exit 1; fi
  exit 0
fi

mkdir -p "$W"
if ((${#apt_pkgs[@]})); then
  echo "setup: apt-get install ${apt_pkgs[*]}" >&2
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${apt_pkgs[@]}"
fi

if ((want_scrapy)) && [[ ! -x "$W/venv/bin/scrapy" ]]; then
  echo "setup: Scrapy $SCRAPY_VERSION into $W/venv" >&2
  python3 -m venv "$W/venv"
  "$W/venv/bin/pip" install -q "scrapy==$SCRAPY_VERSION"
fi

if ((want_crawlee)); then
  # Only @crawlee/cheerio: the `crawlee` meta-package pulls in jsdom dependencies as well.
  mkdir -p "$W/crawlee"
  cp "$HERE/peers/crawlee/package.json" "$HERE/peers/crawlee/crawl.mjs" "$W/crawlee/"
  if [[ ! -f "$W/crawlee/node_modules/@crawlee/cheerio/package.json" ]]; then
    echo "setup: Crawlee into $W/crawlee" >&2
    (cd "$W/crawlee" && npm install --no-audit --no-fund --loglevel=error)
  fi
fi

if ((want_spider)) && spider_stale "$W/target-spider-lean"; then
  echo "setup: building spider-rs into $W/target-spider-lean" >&2
  (cd "$HERE/peers/spider_rs" && cargo build --release --locked --target-dir "$W/target-spider-lean")
fi
if ((want_spider_defaults)) && spider_stale "$W/target-spider-defaults"; then
  echo "setup: building spider-rs (spider's default features) into $W/target-spider-defaults" >&2
  (cd "$HERE/peers/spider_rs" && cargo build --release --locked --features spider-defaults \
    --target-dir "$W/target-spider-defaults")
fi
echo "setup done (${peers[*]})" >&2
