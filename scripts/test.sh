#!/usr/bin/env bash
# The one test command (README, and what CI runs): installs what the tests need when it is
# missing, then checks formatting and lints, then runs every test of the workspace.
#
# Needs: the Rust toolchain. The test data is in the repository (`testdata/`; KUMO_TESTDATA
# points the tests at another copy). Tests start their own servers on 127.0.0.1; nothing else
# is contacted.
set -euo pipefail
cd "$(dirname "$0")/.."
# No incremental-compilation state: a clean clone (as CI has) never reuses it, and for the
# workspace's hundred test binaries it is gigabytes that a small CI disk cannot spare.
export CARGO_INCREMENTAL=0
# The guide's builder, installed with cargo when it is missing.
MDBOOK_VERSION=0.4.52
# The dependency checker, likewise.
CARGO_DENY_VERSION=0.20.2

# Installs Debian package $1 (for what $2 says) unless it is there already: the tests start
# throwaway servers from these binaries, and fail, never skip, without them.
apt_install() {
  local sudo=()
  if [[ $(id -u) != 0 ]] && command -v sudo >/dev/null 2>&1; then sudo=(sudo); fi
  if ! { "${sudo[@]}" apt-get update -q &&
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$1"; }; then
    echo "error: cannot install $1 (apt-get install $1); $2 need it" >&2
    exit 2
  fi
}

# PostgreSQL server binaries: Debian keeps them in /usr/lib/postgresql/N/bin, off PATH.
if ! command -v initdb >/dev/null 2>&1 && ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
  apt_install postgresql "the PostgreSQL sink tests"
fi
# redis-server: the distributed-crawl tests start their own.
if ! command -v redis-server >/dev/null 2>&1 && [[ ! -x /usr/bin/redis-server ]]; then
  apt_install redis-server "the Redis tests"
fi

# jq and curl: the guide's console examples use them, and a test runs those examples.
for tool in jq curl; do
  command -v "$tool" >/dev/null 2>&1 || apt_install "$tool" "the guide's console examples"
done

# Chromium for the rendering tests: Debian's headless shell (the binary itself is started,
# not the /usr/bin wrapper, which does not exec).
if [[ ! -x /usr/lib/chromium/chromium-headless-shell && ! -x /usr/lib/chromium/chromium ]]; then
  apt_install chromium-headless-shell "the browser rendering tests"
fi

# Python's WARC tools, in a virtual environment of the repository's own (.venv): the WARC
# tests check kumo's files with warcio (check, index, extract) and cdxj-indexer.
if [[ ! -x .venv/bin/warcio || ! -x .venv/bin/cdxj-indexer ]]; then
  if ! python3 -m venv .venv >/dev/null 2>&1; then
    command -v python3 >/dev/null 2>&1 || apt_install python3 "the WARC tests"
    apt_install python3-venv "the WARC tests"
    python3 -m venv .venv
  fi
  if ! .venv/bin/pip install -q warcio==1.8.1 cdxj-indexer==1.5.0; then
    echo "error: cannot install warcio and cdxj-indexer into .venv; the WARC tests need them" >&2
    exit 2
  fi
fi
export KUMO_PYTHON_BIN="$PWD/.venv/bin"

# mdBook builds the user guide (docs/): a page missing from it or a broken SUMMARY.md fails here.
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if ! command -v mdbook >/dev/null 2>&1; then
  if ! cargo install --locked mdbook --version "$MDBOOK_VERSION"; then
    echo "error: cannot install mdbook $MDBOOK_VERSION (cargo install mdbook); the guide needs it" >&2
    exit 2
  fi
fi

# cargo-deny checks the dependencies' licenses, bans and sources against deny.toml.
if ! command -v cargo-deny >/dev/null 2>&1; then
  if ! cargo install --locked cargo-deny --version "$CARGO_DENY_VERSION"; then
    echo "error: cannot install cargo-deny $CARGO_DENY_VERSION (cargo install cargo-deny); the dependency checks need it" >&2
    exit 2
  fi
fi

# rustfmt and clippy ship as rustup components; add them if this toolchain lacks them. Where
# they cannot be had (no rustup, no network), the tests still run and the skip is said.
lint=1
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  rustup component add rustfmt clippy || lint=0
fi
if [[ $lint == 1 ]]; then
  cargo fmt --all -- --check
  cargo clippy --workspace --all-targets --locked -- -D warnings
else
  echo "warning: rustfmt/clippy unavailable: formatting and lint checks skipped" >&2
fi
# The library alone, every optional feature off, keeps compiling (the tests build all of them).
cargo check -p kumo --lib --no-default-features --locked
# ...and leaves out what the features bring: none of these may be in its dependency tree.
tree=$(cargo tree -p kumo --no-default-features -e normal --locked)
if heavy=$(grep -E " (redis|tokio-postgres|rquickjs|chromiumoxide|axum) v" <<<"$tree"); then
  echo "error: kumo --no-default-features still depends on:" >&2
  echo "$heavy" >&2
  exit 1
fi
# Every dependency's license is one deny.toml allows, and every crate comes from the registry.
cargo deny --locked check --hide-inclusion-graph licenses bans sources
mdbook build docs
# The API docs build without a warning (a broken or private intra-doc link fails here).
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --locked
cargo test --workspace --locked "$@"
