#!/bin/sh
# The init script starts rknn_server, starts it again when it dies, and stops it (with its
# respawn loop) on `stop`.   check_init_script.sh INIT_SCRIPT RKNN_SERVER WORK_DIR
set -eu
init=$1 daemon=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
printf 'listen = 127.0.0.1:0\nport_file = %s/port\n' "$dir" >"$dir/server.conf"
export RKNN_SERVER_BIN="$daemon" RKNN_SERVER_CONFIG="$dir/server.conf"
export RKNN_SERVER_LOG="$dir/server.log" RKNN_SERVER_RUN_DIR="$dir"

wait_for_new_pid() {  # wait_for_new_pid OLD_PID -> prints the running daemon's pid
  i=0
  while [ $i -lt 300 ]; do
    pid=$(cat "$dir/rknn_server.pid" 2>/dev/null || true)
    if [ -n "$pid" ] && [ "$pid" != "$1" ] && [ -s "$dir/port" ] && kill -0 "$pid" 2>/dev/null; then
      echo "$pid"; return 0
    fi
    sleep 0.1; i=$((i + 1))
  done
  echo "no daemon came up; log:" >&2; cat "$dir/server.log" >&2; return 1
}

sh "$init" start
first=$(wait_for_new_pid none)
rm -f "$dir/port"
kill -KILL "$first"
second=$(wait_for_new_pid "$first")
echo "respawned: $first -> $second"
sh "$init" status
sh "$init" stop
sleep 0.5
if kill -0 "$second" 2>/dev/null; then echo "daemon $second still running after stop" >&2; exit 1; fi
if sh "$init" status; then echo "status says running after stop" >&2; exit 1; fi
grep -q "start rknn server" "$dir/server.log"
echo "init script: start, respawn and stop work"
rm -rf "$dir"
