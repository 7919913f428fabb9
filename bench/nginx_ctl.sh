#!/usr/bin/env bash
# nginx_ctl.sh start SITE_DIR | stop | worker-pid
# Runs Debian's nginx on 127.0.0.1:8088 (loopback only) with nginx.conf.tmpl; its state
# (config, pid, error log) in bench/.work/nginx/.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PREFIX="$HERE/.work/nginx"
PIDF="$PREFIX/nginx.pid"
case "${1:-}" in
  start)
    ROOT="$(cd "${2:?site dir}" && pwd)"
    mkdir -p "$PREFIX/tmp"
    if [[ -s "$PIDF" ]] && kill -0 "$(cat "$PIDF")" 2>/dev/null; then
      echo "nginx already running (pid $(cat "$PIDF")); stopping it first" >&2
      "$0" stop
    fi
    sed -e "s#@PREFIX@#$PREFIX#g" -e "s#@ROOT@#$ROOT#g" "$HERE/nginx.conf.tmpl" > "$PREFIX/nginx.conf"
    nginx -p "$PREFIX" -c "$PREFIX/nginx.conf" -e "$PREFIX/error.log"
    for _ in $(seq 1 50); do
      if curl -fsS -o /dev/null --max-time 1 http://127.0.0.1:8088/index.html 2>/dev/null; then
        echo "nginx up (master pid $(cat "$PIDF"), root $ROOT)"; exit 0
      fi
      sleep 0.1
    done
    echo "nginx did not come up" >&2; cat "$PREFIX/error.log" >&2; exit 1 ;;
  stop)
    if [[ -s "$PIDF" ]]; then
      P="$(cat "$PIDF")"
      kill -QUIT "$P" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$P" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$P" 2>/dev/null; then kill -TERM "$P" 2>/dev/null || true; fi
      rm -f "$PIDF"; echo "nginx stopped (pid $P)"
    else
      echo "nginx not running (no pid file)"
    fi ;;
  worker-pid)
    pgrep -P "$(cat "$PIDF")" | head -n1 ;;
  *) echo "usage: $0 start SITE_DIR | stop | worker-pid" >&2; exit 2 ;;
esac
