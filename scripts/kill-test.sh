#!/usr/bin/env bash
# The kill test, longer: kill -9 the crawl KILLS times (default 20) at random moments, resume
# each time, then check every page once in the JSON Lines and PostgreSQL outputs, the summary
# against the ground truth, and politeness from the server's side (tests/it/kill_resume.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
KUMO_KILLS=${1:-20} exec cargo test --locked --test kill_resume -- --nocapture
