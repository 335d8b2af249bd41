#!/usr/bin/env bash
# Start or stop a moto server (the local AWS emulator) on a port, remembering whether this
# script started it, so `stop` never kills an emulator somebody else runs.
#   infra/emulator.sh start PORT   -> starts moto unless something already answers there
#   infra/emulator.sh stop PORT    -> stops it only if `start` started it
set -euo pipefail
cmd=${1:?start|stop}; port=${2:?port}
root=$(cd "$(dirname "$0")/.." && pwd)
state="$root/.emulator"; pidfile="$state/moto-$port.pid"
mkdir -p "$state"
answers() { curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/moto-api/" ; }
case "$cmd" in
  start)
    if answers; then echo "emulator: something already answers on :$port; using it"; exit 0; fi
    "$root/.venv/bin/python" "$root/infra/moto_server.py" -H 127.0.0.1 -p "$port" >"$state/moto-$port.log" 2>&1 &
    echo $! >"$pidfile"
    for _ in $(seq 1 50); do answers && { echo "emulator: moto started on :$port"; exit 0; }; sleep 0.2; done
    echo "emulator: moto did not start on :$port; see $state/moto-$port.log" >&2; exit 1 ;;
  stop)
    if [ -f "$pidfile" ]; then kill "$(cat "$pidfile")" 2>/dev/null || true; rm -f "$pidfile"; echo "emulator: stopped moto on :$port"; fi ;;
  *) echo "usage: $0 start|stop PORT" >&2; exit 2 ;;
esac
