# Helpers shared by scripts/services.sh and its halves (sourced, not run): starting a daemon in
# the background with its log and pid file under the state directory, waiting for it, stopping it.

die() { echo "services: $*" >&2; exit 1; }

pkg_version() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null || echo none; }

file_is_static() { ! ldd "$1" >/dev/null 2>&1; }

# The pid a daemon of ours recorded, when that process is still alive.
pid_of() {
  local f="$STATE/run/$1.pid" pid
  [ -s "$f" ] || return 1
  pid="$(tr -dc 0-9 < "$f")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

owned() { pid_of "$1" >/dev/null; }

# start_daemon NAME COMMAND...: runs COMMAND, which must stay in the foreground, in its own session,
# its pid in run/NAME.pid and its output in logs/NAME.log. A daemon's own pid file, if it insists
# on one, goes elsewhere (run/own/): some refuse to start when theirs names a live process.
start_daemon() {
  local name="$1"; shift
  mkdir -p "$STATE/logs" "$STATE/run/own"
  : > "$STATE/logs/$name.log"
  # A new session: the daemon outlives this script and the test process that ran it.
  # fd 9 is the lock of `up`: a daemon must not hold it after the script ends.
  nohup setsid "$@" >> "$STATE/logs/$name.log" 2>&1 < /dev/null 9>&- &
  # setsid execs in place here (a background job is never a group leader), so $! is the daemon.
  echo "$!" > "$STATE/run/$name.pid"
}

# wait_for NAME SECONDS CHECK...: polls CHECK until it succeeds; on timeout, or when the daemon
# died, prints the tail of its log and exits 1.
wait_for() {
  local name="$1" secs="$2"; shift 2
  local deadline=$((SECONDS + secs))
  until "$@"; do
    if ! owned "$name"; then
      fail_with_log "$name" "$name exited while starting"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      fail_with_log "$name" "$name did not answer within ${secs}s"
    fi
    sleep 0.5
  done
}

fail_with_log() {
  echo "services: $2; the last lines of $STATE/logs/$1.log:" >&2
  tail -n 30 "$STATE/logs/$1.log" >&2 2>/dev/null || true
  exit 1
}

# stop_daemon NAME: stops a daemon this script started (TERM, then KILL after 30 s).
stop_daemon() {
  local name="$1" pid i
  if ! pid="$(pid_of "$name")"; then
    rm -f "$STATE/run/$name.pid"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "services: $name (pid $pid) ignored TERM for 30s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$STATE/run/$name.pid"
  echo "services: stopped $name (pid $pid)"
}
