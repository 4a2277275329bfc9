#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Real services beside a busy job, without and with the daemon as shipped:
# does packing cost a service's request path its latency, and what does it
# give the idle CPU?
#
# Each service is Debian's own program in a private directory, on a unix
# socket, under a fixed-rate open-loop client whose latency runs from each
# request's intended send time:
#
#   postgres  PostgreSQL, pgbench -S -c 4 -j 2 -R RATE -l (select-only;
#             latency from its per-transaction log, which pgbench measures
#             from the scheduled start under -R)
#   nginx     nginx (worker_processes auto), bench-client --proto http, 4
#             connections, GET of a small static file
#   redis     redis-server (no persistence), bench-client --proto redis, 4
#             connections, GET of a 100-byte value
#
# Beside it, the busy job: turbo-bench's intensive thread pinned to CPU 0 at
# a 70% duty cycle (room beside it, as the other benchmarks leave it), whose
# ops/s are its throughput. Rounds alternate without ("off") and with ("on")
# the daemon started as shipped: conf/turbosched.conf unchanged, no rule of
# ours, rules.d empty; a drop-in only moves its control socket and state
# file into the scratch directory. Each round runs ROUND_S seconds; its
# figures cover the last WINDOW_S (default half: behaviour classification
# needs its 10 s window first): the service's p50/p99/max latency, CPU 1's
# wake-ups (local timer + rescheduling interrupts from /proc/interrupts:
# with a cpuidle driver that polls, "usage" reads 0 on a CPU woken every
# millisecond) and idle share (/proc/stat), and the busy job's ops/s. Once
# the window has closed (the load goes on AFTER_S seconds more), the
# service's and the client's threads: how many
# the daemon called jitter (its dump) and how many run confined
# (Cpus_allowed_list narrower than the online CPUs), and which (by role:
# postgres-backend, nginx-worker...); in "off" rounds the latter must be 0
# (the daemon gave every mask back when it stopped).
#
# This machine is shared: each round also records the load from outside
# the experiment and the hypervisor's steal, marks a round where either is
# high as disturbed, and gives the medians over the undisturbed rounds
# beside those over all of them. Rounds alternate so that slow drifts hit
# both conditions alike; more rounds (ROUNDS) narrow the rest.
#
# Duration: 2 x ROUNDS x ROUND_S per service plus about half a minute of
# setup (pgbench -i): about 13 minutes for the three at the defaults.
#
# Setup: postgresql, nginx and redis-server are installed when missing
# (apt-get, non-interactive; no package's service is started: a policy-rc.d
# that says no is put in place for the install where none is). Every
# instance is ours, stopped and removed at the end, even after a failure.
#
# usage: services.sh BUILD_DIR [ROUND_S] [ROUNDS] [SERVICES]
#   ROUND_S   seconds per round (default 40, at least 20)
#   ROUNDS    rounds of each condition (default 3)
#   SERVICES  any of "postgres nginx redis" (default all three)
# Environment:
#   TS_SERVICES_RATE    requests (transactions) per second (default 200)
#   TS_SERVICES_WINDOW  seconds at the end of each round measured (default ROUND_S / 2)
#   TS_SERVICES_DUTY    the busy job's duty cycle in % (default 70)
#   TS_SERVICES_INSTALL no: skip (exit 77) instead of installing what is missing
#   TURBOSCHEDD, TURBOSCHED_CTL  the daemon and turbosched-ctl to run (default: BUILD_DIR's)
. "$(dirname "$0")/lib.bash"
ROUND_S=${2:-40}
ROUNDS=${3:-3}
SERVICES=${4:-postgres nginx redis}
RATE=${TS_SERVICES_RATE:-200}
WINDOW_S=${TS_SERVICES_WINDOW:-$((ROUND_S / 2))}
DUTY=${TS_SERVICES_DUTY:-70}
[ "$ROUND_S" -ge 20 ] || { echo "services.sh: ROUND_S must be at least 20" >&2; exit 2; }
[ "$WINDOW_S" -ge 4 ] && [ "$WINDOW_S" -lt "$ROUND_S" ] || { echo "services.sh: the window must be 4 s or more and shorter than the round" >&2; exit 2; }
for s in $SERVICES; do
    case $s in postgres|nginx|redis) ;; *) echo "services.sh: unknown service '$s'" >&2; exit 2 ;; esac
done
CLIENT=$BUILD/bench-client
TB=$BUILD/turbo-bench
for f in "$CLIENT" "$TB" "$CTL"; do
    [ -x "$f" ] || { echo "services.sh: $f not built" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "services.sh: jq not installed (scripts/install-deps.sh)" >&2; exit 77; }
IDLE_CPU=1
# shellcheck disable=SC2034
SOURCE="LOC+RES interrupts"     # idle_counts (lib.bash): interrupts and /proc/stat, never cpuidle usage
ONLINE=$(cat /sys/devices/system/cpu/online)
[ "$(nproc)" -ge 2 ] || { echo "services.sh: needs 2 CPUs or more" >&2; exit 77; }

# ---- setup: packages, without starting their services ----
POLICY_RC=/usr/sbin/policy-rc.d
MADE_POLICY=
SVC_STOP=
services_cleanup() {
    [ -n "$SVC_STOP" ] && { $SVC_STOP || true; }
    [ -n "$MADE_POLICY" ] && rm -f "$POLICY_RC"
    bench_cleanup
}
trap services_cleanup EXIT

install_missing() {
    local want=() p
    for p in postgresql nginx redis-server; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || want+=("$p")
    done
    [ ${#want[@]} -eq 0 ] && return 0
    [ "${TS_SERVICES_INSTALL:-yes}" != no ] ||
        { echo "services.sh: not installed: ${want[*]} (TS_SERVICES_INSTALL=no)" >&2; exit 77; }
    if [ ! -e "$POLICY_RC" ]; then
        # invoke-rc.d and deb-systemd-invoke ask it: 101 = action forbidden
        printf '#!/bin/sh\n# turbosched services.sh: no service starts while it installs packages\nexit 101\n' > "$POLICY_RC"
        chmod 0755 "$POLICY_RC"
        MADE_POLICY=1
    fi
    echo "services.sh: installing ${want[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${want[@]}" >/dev/null
    if [ -n "$MADE_POLICY" ]; then rm -f "$POLICY_RC"; MADE_POLICY=; fi
}
install_missing
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$PGBIN/postgres" ] && [ -x "$PGBIN/pgbench" ] || { echo "services.sh: no PostgreSQL server in /usr/lib/postgresql" >&2; exit 77; }

# The services' directories: the postgres and www-data users must reach them
chmod 0711 "$TMP"
SVC=$TMP/svc
mkdir -m 0711 "$SVC"

# ---- the services: NAME_start sets SVC_PID (the top process) and
# SVC_STOP; NAME_client ROUND_S FROM_S runs the client in the foreground
# and leaves "p50 p99 max n" in $TMP/lat ----
postgres_start() {
    local d=$SVC/pg
    mkdir -p "$d/sock"
    chown -R postgres: "$d"
    runuser -u postgres -- "$PGBIN/initdb" -D "$d/data" -U postgres --auth=trust -N >"$d/initdb.log" 2>&1 ||
        { echo "services.sh: initdb failed:" >&2; tail -5 "$d/initdb.log" >&2; exit 1; }
    SVC_STOP=postgres_stop
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$d/data" -l "$d/server.log" -w -t 60 \
        -o "-k $d/sock -c listen_addresses=''" start >/dev/null ||
        { echo "services.sh: PostgreSQL did not start:" >&2; tail -5 "$d/server.log" >&2; exit 1; }
    SVC_PID=$(head -1 "$d/data/postmaster.pid")
    "$PGBIN/pgbench" -h "$d/sock" -U postgres -i -s 10 -q postgres >"$d/init.log" 2>&1 ||
        { echo "services.sh: pgbench -i failed:" >&2; tail -5 "$d/init.log" >&2; exit 1; }
}
postgres_stop() {
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$SVC/pg/data" -m fast -w -t 30 stop >/dev/null 2>&1 || true
    SVC_STOP=
}
postgres_client() {
    local round=$1 from=$2 t0
    rm -f "$TMP"/pglog.*
    t0=${EPOCHREALTIME/./}
    "$PGBIN/pgbench" -h "$SVC/pg/sock" -U postgres -n -S -c 4 -j 2 -R "$RATE" -T "$((round + AFTER_S))" \
        -l --log-prefix="$TMP/pglog" postgres >"$TMP/client.out" 2>&1 &
    CLIENT_PID=$!
    measure_round "$round" "$from"
    [ "$CLIENT_RC" -eq 0 ] || { echo "services.sh: pgbench failed: $(tail -3 "$TMP/client.out")" >&2; exit 1; }
    # log: client xact latency_us script epoch_s epoch_us [lag]; the end of
    # each transaction against the window's start and end
    cat "$TMP"/pglog.* | awk -v w=$(( t0 + from * 1000000 )) -v z=$(( t0 + round * 1000000 )) \
        '$5 * 1000000 + $6 >= w && $5 * 1000000 + $6 < z { print $3 }' | sort -n |
        awk '{ v[NR] = $1 } END { if (!NR) { print "- - - 0"; exit }
            i50 = int(NR * 0.5); if (i50 < NR * 0.5) i50++; i99 = int(NR * 0.99); if (i99 < NR * 0.99) i99++
            print v[i50], v[i99], v[NR], NR }' > "$TMP/lat"
}

nginx_start() {
    local d=$SVC/nginx
    mkdir -m 0755 "$d" "$d/www" "$d/tmp"
    head -c 600 /dev/zero | tr '\0' x > "$d/www/index.html"
    cat > "$d/nginx.conf" <<CONF
# Debian's defaults where they matter here: workers as www-data, one per CPU
user www-data;
worker_processes auto;
daemon off;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 768; }
http {
    access_log off;
    # the client keeps its 4 connections for the whole round (1.22 closes
    # one after 1000 requests by default)
    keepalive_requests 1000000;
    keepalive_timeout 600s;
    client_body_temp_path $d/tmp/body;
    proxy_temp_path $d/tmp/proxy;
    fastcgi_temp_path $d/tmp/fastcgi;
    uwsgi_temp_path $d/tmp/uwsgi;
    scgi_temp_path $d/tmp/scgi;
    server {
        listen unix:$d/http.sock;
        root $d/www;
    }
}
CONF
    nginx -e "$d/error.log" -p "$d" -c "$d/nginx.conf" >"$d/stderr.log" 2>&1 &
    SVC_PID=$!
    SVC_STOP=nginx_stop
    answers() { kill -0 "$SVC_PID" 2>/dev/null || return 2; "$CLIENT" --proto http --unix "$d/http.sock" -k /index.html -n 1 -r 1 -t 1 --grace 2 >/dev/null 2>&1; }
    wait_until 30 answers || { echo "services.sh: nginx did not answer:" >&2; tail -5 "$d/error.log" >&2; exit 1; }
}
nginx_stop() { kill -TERM "$SVC_PID" 2>/dev/null || true; wait "$SVC_PID" 2>/dev/null || true; SVC_STOP=; }
nginx_client() { client_run "$1" "$2" --proto http --unix "$SVC/nginx/http.sock" -k /index.html; }

redis_start() {
    local d=$SVC/redis
    mkdir -p "$d"
    redis-server --port 0 --unixsocket "$d/redis.sock" --unixsocketperm 700 --save '' --appendonly no \
        --daemonize no --dir "$d" --logfile "$d/redis.log" &
    SVC_PID=$!
    SVC_STOP=redis_stop
    answers() { kill -0 "$SVC_PID" 2>/dev/null || return 2; "$CLIENT" --proto redis --unix "$d/redis.sock" -n 1 -r 1 -t 1 --grace 2 >/dev/null 2>&1; }
    wait_until 30 answers || { echo "services.sh: redis-server did not answer:" >&2; tail -5 "$d/redis.log" >&2; exit 1; }
    redis-cli -s "$d/redis.sock" SET bench "$(head -c 100 /dev/zero | tr '\0' v)" >/dev/null
}
redis_stop() { kill -TERM "$SVC_PID" 2>/dev/null || true; wait "$SVC_PID" 2>/dev/null || true; SVC_STOP=; }
redis_client() { client_run "$1" "$2" --proto redis --unix "$SVC/redis/redis.sock" -k bench; }

client_run() {   # client_run ROUND_S FROM_S BENCH-CLIENT-ARGS...
    local round=$1 from=$2; shift 2
    "$CLIENT" "$@" -c 4 -r "$RATE" -t "$((round + AFTER_S))" --from "$from" --until "$round" >"$TMP/client.out" 2>&1 &
    CLIENT_PID=$!
    measure_round "$round" "$from"
    [ "$CLIENT_RC" -eq 0 ] || { echo "services.sh: bench-client: $(grep -v = "$TMP/client.out" | tail -3; grep -E '^(window_lost|errors)=' "$TMP/client.out" | paste -sd' ')" >&2; exit 1; }
    local k; for k in p50_us p99_us max_us window_answered; do sed -n "s/^$k=//p" "$TMP/client.out"; done | paste -sd' ' > "$TMP/lat"
}

# ---- one round ----
# measure_round ROUND_S FROM_S: while the client ($CLIENT_PID) runs, CPU
# 1's counts over the window (FROM_S to ROUND_S) and the other load (to
# 1 s before its end) into $TMP/idle; once the window has closed, while the
# client, the service and the busy job still run (AFTER_S more seconds),
# the threads' classes and the daemon's plan into $TMP/threads and
# $TMP/plan; then waits for the client: CLIENT_RC. The look at the threads
# (a dump of the daemon's table, a walk of /proc by a dozen short-lived
# tools) costs both CPUs tens of milliseconds, more with the daemon than
# without: made inside the window, it set the p99 of a service at 200
# requests/s, so it waits for the window's end.
AFTER_S=3
at() {   # at T0_US S: sleep until S seconds after T0_US (EPOCHREALTIME, µs)
    local d=$(( $1 + $2 * 1000000 - ${EPOCHREALTIME/./} ))
    [ "$d" -le 0 ] || sleep "$(printf '%d.%06d' $((d / 1000000)) $((d % 1000000)))"
}
measure_round() {
    local round=$1 from=$2 t0=${EPOCHREALTIME/./} u0 t0i u1 t1i s0 s1 b0 st0 b1 st1 l0 l1 c0 cs0 c1 cs1
    PIDS+=("$CLIENT_PID")
    at "$t0" "$from"
    read -r u0 t0i < <(idle_counts); s0=${EPOCHREALTIME/./}
    read -r b0 st0 < <(load_ns "$TMP/ours0"); l0=${EPOCHREALTIME/./}
    read -r c0 cs0 < <(cpu0_ticks)
    at "$t0" $((round - 1))
    read -r b1 st1 < <(load_ns "$TMP/ours1"); l1=${EPOCHREALTIME/./}
    # busy (ns) from idle: all CPUs' wall time less idle and steal
    b0=$(( -b0 - st0 )) b1=$(( NCPU * (l1 - l0) * 1000 - b1 - st1 ))
    at "$t0" "$round"
    read -r u1 t1i < <(idle_counts); s1=${EPOCHREALTIME/./}
    read -r c1 cs1 < <(cpu0_ticks)
    threads_snapshot > "$TMP/threads"
    echo - > "$TMP/plan"
    if [ -n "$DPID" ]; then
        ctl status 2>/dev/null | sed -n 's/^Plan: *//p' | head -1 | tr ' ' '_' > "$TMP/plan" || true
    fi
    wait "$CLIENT_PID" && CLIENT_RC=0 || CLIENT_RC=$?
    awk -v u=$((u1 - u0)) -v t=$((t1i - t0i)) -v e=$((s1 - s0)) -v o=$(( (b1 - b0) - $(ours_delta "$TMP/ours0" "$TMP/ours1") )) -v st=$((st1 - st0)) \
        -v b=$((b1 - b0)) -v le=$((l1 - l0)) \
        'BEGIN { printf "%.1f %.1f %.1f %.1f\n", u / (e / 1e6), 100 * t / e, (o > 0 ? o / 10 / le : 0), (b + st > 0 ? 100 * st / (b + st) : 0) }' > "$TMP/idle"
    # CPU 0 over the window (s0 to s1): busy, the wall time less idle and steal
    awk -v e=$(( (s1 - s0) * 1000 )) -v i=$((c1 - c0)) -v st=$((cs1 - cs0)) \
        'BEGIN { c = e - i - st; printf "%.1f\n", (c + st > 0 ? 100 * st / (c + st) : 0) }' > "$TMP/steal0"
}
# cpu0_ticks: "IDLE STEAL" of CPU 0, the busy job's, in ns (see load_ns):
# the hypervisor's steal there is time the busy job wanted and did not
# get, whatever the daemon did
cpu0_ticks() { awk -v hz="$HZ" '$1 == "cpu0" { printf "%.0f %.0f\n", ($5 + $6) * 1e9 / hz, $9 * 1e9 / hz }' /proc/stat; }
# load_ns FILE: "IDLE STEAL": the idle (and iowait) time of all CPUs so
# far and the time the hypervisor gave them to others (steal), in ns, from
# /proc/stat. Busy time is the wall time less those two: this kernel
# accounts user and system time by sampling at its tick (250 Hz), and the
# busy job's 10 ms cycle beats with it, so their sum drifted 10-30% of a
# CPU from the threads' own schedstat time with nothing else running;
# idle time is measured, not sampled, where the tick stops in idle; into FILE each of the experiment's own threads (the service, its
# client, the busy job, the daemon) and its schedstat time. What BUSY grew
# by beyond those threads' time is load from outside the experiment;
# steal, a host that ran other VMs on these vCPUs' time: both disturb a
# round. Steal is reported as a share of the time the vCPUs wanted to run:
# a vCPU that idles (as CPU 1 more often does with the daemon) accrues
# none, so steal in % of a CPU would favour one condition. FILE is
# written before the line, so that it is complete once the line is read.
HZ=$(getconf CLK_TCK)
NCPU=$(nproc)
load_ns() {
    local p
    { tree "$SVC_PID"; tree "$CLIENT_PID"; echo "$TB_PID"; [ -z "$DPID" ] || echo "$DPID"; } |
        while read -r p; do awk '{ print FILENAME, $1 }' /proc/"$p"/task/*/schedstat 2>/dev/null || true; done > "$1"
    awk -v hz="$HZ" '$1 == "cpu" { printf "%.0f %.0f\n", ($5 + $6) * 1e9 / hz, $9 * 1e9 / hz }' /proc/stat
}
# ours_delta FILE0 FILE1: ns our threads ran between the two; a thread
# born in between counts whole, one gone by FILE1 (a PostgreSQL
# autovacuum worker) is left out instead of taking its whole past off
ours_delta() {
    awk 'NR == FNR { a[$1] = $2; next } { d += ($1 in a) ? $2 - a[$1] : $2 } END { printf "%.0f\n", d }' "$1" "$2"
}

# "pid" of every process of the service: the top one and its descendants
tree() {
    local p
    echo "$1"
    for p in $(pgrep -P "$1" || true); do tree "$p"; done
}
# role PID TID: the thread's name; for a process of a multi-process
# service, its role from the title it gives itself (postgres-backend,
# postgres-walwriter, nginx-worker...)
role() {
    local t
    t=$(tr '\0' ' ' < /proc/"$1"/cmdline 2>/dev/null | sed 's/ *$//') || t=
    case $t in
    "postgres: "*"[local]"*) echo postgres-backend ;;
    "postgres: "*) t=${t#postgres: }; echo "postgres-${t// /-}" ;;
    "nginx: "*) t=${t#nginx: }; echo "nginx-${t%% *}" ;;
    *) t=$(cat /proc/"$1"/task/"$2"/comm 2>/dev/null) || t=gone; echo "${t// /_}" ;;
    esac
}
# threads_snapshot: "S_THREADS S_JITTER S_CONFINED C_THREADS C_JITTER C_CONFINED WHO"
# (S: the service, C: its client; WHO: role x count of the confined ones)
threads_snapshot() {
    : > "$TMP/classes"
    if [ -n "$DPID" ]; then
        ctl --json dump 2>/dev/null | jq -r '.tasks[] | "\(.tid) \(.class)"' > "$TMP/classes" 2>/dev/null || true
    fi
    local who pid tid f cls allowed
    for who in S C; do
        local pids
        if [ $who = S ]; then pids=$(tree "$SVC_PID"); else pids=$(tree "$CLIENT_PID"); fi
        for pid in $pids; do
            for f in /proc/"$pid"/task/*; do
                tid=${f##*/}
                allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$f/status" 2>/dev/null) || continue
                [ -n "$allowed" ] || continue
                cls=$(awk -v t="$tid" '$1 == t { print $2 }' "$TMP/classes")
                echo "$who $tid ${cls:--} $([ "$allowed" = "$ONLINE" ] && echo 0 || echo 1) $(role "$pid" "$tid")"
            done
        done
    done | awk '{ n[$1]++; if ($3 == "jitter") j[$1]++; if ($4) { c[$1]++; w[$5]++ } }
        END { s = ""; for (k in w) s = s (s ? "," : "") k "×" w[k]
              printf "%d %d %d %d %d %d %s\n", n["S"], j["S"], c["S"], n["C"], j["C"], c["C"], (s ? s : "-") }'
}

# run_round R SERVICE off|on: one line of figures into $TMP/rounds (in this
# shell, not a subshell: the cleanup must know the daemon it started)
run_round() {
    local r=$1 svc=$2 cond=$3 from=$((ROUND_S - WINDOW_S)) line
    if [ "$cond" = on ]; then daemon_start; fi
    "$TB" -n 1 -m 0 -c 0 -d "$DUTY" -t "$((ROUND_S + AFTER_S))" --ops-from "$from" --ops-until "$ROUND_S" --json > "$TMP/tb.json" &
    TB_PID=$!
    PIDS+=("$TB_PID")
    "${svc}_client" "$ROUND_S" "$from"
    wait "$TB_PID" || { echo "services.sh: turbo-bench failed" >&2; exit 1; }
    if [ "$cond" = on ]; then daemon_stop; fi
    line="$r $svc $cond $(cat "$TMP/lat") $(cat "$TMP/idle") $(json_num ops_per_s_total "$TMP/tb.json") $(cat "$TMP/threads") $(cat "$TMP/plan") $(cat "$TMP/steal0")"
    echo "$line" >> "$TMP/rounds"
    echo "# $line" >&2
}

# ---- the daemon as shipped ----
cp "$SRC/conf/turbosched.conf" "$TMP/turbosched.conf"
mkdir "$TMP/rules.d"
cat > "$TMP/rules.d/00-bench.conf" <<CONF
[daemon]
control_socket = $TMP/control
state_file = $STATE_DIR/state
CONF
"$DAEMON" --config "$TMP/turbosched.conf" --check-config > "$TMP/check.out" 2>&1 ||
    { echo "services.sh: the shipped configuration does not load:" >&2; cat "$TMP/check.out" >&2; exit 1; }
RULES=$(grep '^\[rule ' "$TMP/check.out" | sed 's/^\[rule \(.*\)\]$/\1/' | paste -sd, -)

rel() { case $1 in "$SRC"/*) echo "${1#"$SRC"/}" ;; *) basename "$1" ;; esac; }
commit="$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$SRC" diff --quiet 2>/dev/null || echo ' (with local changes)')"
echo "# services.sh: $SERVICES; rate $RATE/s; busy job at $DUTY% on CPU 0; $ROUND_S s rounds, the last $WINDOW_S s measured; $ROUNDS rounds each, alternating" >&2
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at start" >&2
START_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
: > "$TMP/rounds"
for svc in $SERVICES; do
    "${svc}_start"
    for r in $(seq "$ROUNDS"); do
        for cond in off on; do
            run_round "$r" "$svc" "$cond"
        done
    done
    $SVC_STOP
done

# ---- report ----
# $TMP/rounds: R SVC COND P50 P99 MAX N WAKEUPS IDLE OTHER STEAL OPS S_N S_J S_C C_N C_J C_C WHO PLAN STEAL0
# (STEAL0: CPU 0's steal, % of its runnable time); derived: OPSU, the busy
# job's ops per second CPU 0 was not stolen (OPS / (1 - STEAL0))
FIELDS="r svc cond p50 p99 max n wk idle other steal ops sn sj sc cn cj cc who plan st0 opsu"
median() { sort -g | awk '$1 != "-" { v[++n] = $1 } END { if (!n) { print "-"; exit }
    m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2; if (m >= 1000) printf "%.0f\n", m; else print m }'; }
# A round is disturbed when load from outside the experiment took more
# than this share of one CPU, or steal more than this share of the vCPUs'
# runnable time (%)
DISTURBED_OTHER_PCT=5 DISTURBED_STEAL_PCT=10
# med SERVICE COND FIELD [clean]: the median of FIELD over that service's
# rounds (clean: the undisturbed ones only); FIELD "count": how many rounds
med() {
    awk -v s="$1" -v c="$2" -v f="$3" -v clean="${4:-}" -v lo="$DISTURBED_OTHER_PCT" -v ls="$DISTURBED_STEAL_PCT" -v names="$FIELDS" '
        BEGIN { n = split(names, nm, " "); for (i = 1; i <= n; i++) k[nm[i]] = i }
        { $(k["opsu"]) = sprintf("%.0f", $(k["ops"]) / (1 - $(k["st0"]) / 100)) }
        $2 == s && $3 == c && !(clean && ($(k["other"]) > lo || $(k["steal"]) > ls)) { m++; if (f != "count") print $(k[f]) }
        END { if (f == "count") print m + 0 }' "$TMP/rounds" | { [ "$3" = count ] && cat || median; }
}
us() { awk -v v="$1" 'BEGIN { if (v == "-") print "-"; else if (v >= 10000) printf "%.1f ms", v / 1000; else printf "%.0f µs", v }'; }
rat() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "n/a"; else printf "%.2f", a / b }'; }
ratx() { local r; r=$(rat "$@"); [ "$r" = n/a ] && echo "$r" || echo "${r}x"; }
fewer() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "n/a"; else printf "%.0f", 100 * (1 - a / b) }'; }
client_of() { case $1 in postgres) echo "pgbench -S -c 4 -j 2 -R $RATE" ;; nginx) echo "bench-client http -c 4 -r $RATE" ;; redis) echo "bench-client redis GET -c 4 -r $RATE" ;; esac; }
version_of() {
    case $1 in
    postgres) "$PGBIN/postgres" --version | awk '{ print "PostgreSQL " $3 }' ;;
    nginx) nginx -v 2>&1 | sed 's/^nginx version: //' ;;
    redis) redis-server --version | awk '{ print "Redis " $3 }' | tr -d 'v=' ;;
    esac
}

echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), kernel $(uname -r); commit $commit"
echo "- Daemon: $(rel "$DAEMON") ($("$DAEMON" --version 2>&1 | head -1)), started as shipped: conf/turbosched.conf unchanged, rules: ${RULES:-none}; only its control socket and state file moved"
echo "- Busy job: turbo-bench's intensive thread pinned to CPU 0 at a $DUTY% duty cycle; rate $RATE requests/s; $ROUNDS rounds of $ROUND_S s per condition, alternating off/on, figures over the last $WINDOW_S s of each"
echo "- Load average $START_LOAD at start, $(cut -d' ' -f1-3 /proc/loadavg) at end; CPU $IDLE_CPU's wake-ups are its local timer + rescheduling interrupts per second, its idle share from /proc/stat; \"other load\": CPU time of everything outside the experiment (the machine's busy time from /proc/stat less the schedstat time of the service, its client, the busy job and the daemon), in % of one CPU; \"steal\": the share of the vCPUs' runnable time the hypervisor gave to others (/proc/stat); \"busy job ops per unstolen s\": its ops/s divided by the share of CPU 0's runnable time the hypervisor did not steal (the host's steal takes from the busy job whatever the daemon does, and differs from round to round). A round with other load above $DISTURBED_OTHER_PCT% or steal above $DISTURBED_STEAL_PCT% is disturbed (⚠)"
echo
# summary_table [clean]: medians per service, a row each
summary_table() {
    local svc f clean=${1:-}
    echo "| service (client) | rounds off / on | p50 off → on | p99 off → on | max off → on | CPU $IDLE_CPU wake-ups/s off → on | CPU $IDLE_CPU idle off → on | busy job ops/s off → on | busy job ops per unstolen s off → on | other load off → on | steal off → on | service threads jitter / confined (of) | client threads jitter / confined (of) |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    for svc in $SERVICES; do
        for f in count p50 p99 max wk idle other steal ops opsu sn sj sc cn cj cc; do
            printf -v "off_$f" '%s' "$(med "$svc" off "$f" "$clean")"
            printf -v "on_$f" '%s' "$(med "$svc" on "$f" "$clean")"
        done
        # shellcheck disable=SC2154
        printf '| %s %s (%s) | %s / %s | %s → %s (**%s**) | %s → %s (**%s**) | %s → %s (%s) | %s → %s (%s%% fewer) | %s%% → %s%% | %s → %s (**%s**) | %s → %s (**%s**) | %s%% → %s%% | %s%% → %s%% | %s / %s (%s) | %s / %s (%s) |\n' \
            "$svc" "$(version_of "$svc")" "$(client_of "$svc")" "$off_count" "$on_count" \
            "$(us "$off_p50")" "$(us "$on_p50")" "$(ratx "$on_p50" "$off_p50")" \
            "$(us "$off_p99")" "$(us "$on_p99")" "$(ratx "$on_p99" "$off_p99")" \
            "$(us "$off_max")" "$(us "$on_max")" "$(ratx "$on_max" "$off_max")" \
            "$off_wk" "$on_wk" "$(fewer "$on_wk" "$off_wk")" \
            "$off_idle" "$on_idle" "$off_ops" "$on_ops" "$(ratx "$on_ops" "$off_ops")" \
            "$off_opsu" "$on_opsu" "$(ratx "$on_opsu" "$off_opsu")" "$off_other" "$on_other" "$off_steal" "$on_steal" \
            "$on_sj" "$on_sc" "$on_sn" "$on_cj" "$on_cc" "$on_cn"
        [ -n "$clean" ] && continue
        {
        echo "services_${svc}_p50_ratio=$(rat "$on_p50" "$off_p50")"
        echo "services_${svc}_p99_ratio=$(rat "$on_p99" "$off_p99")"
        echo "services_${svc}_max_ratio=$(rat "$on_max" "$off_max")"
        echo "services_${svc}_ops_ratio=$(rat "$on_ops" "$off_ops")"
        echo "services_${svc}_ops_unstolen_ratio=$(rat "$on_opsu" "$off_opsu")"
        echo "services_${svc}_fewer_wakeups_pct=$(fewer "$on_wk" "$off_wk")"
        echo "services_${svc}_service_confined=$on_sc"
        echo "services_${svc}_undisturbed_rounds=$(med "$svc" off count clean) $(med "$svc" on count clean)"
        } >> "$TMP/kv"
    done
}
echo "Medians over the rounds (ratios: with the daemon / without; the issue's targets: p50 ≤ 1.1x, p99 ≤ 1.2x, busy job ≥ 0.98x):"
echo
summary_table
n_dist=$(awk -v lo="$DISTURBED_OTHER_PCT" -v ls="$DISTURBED_STEAL_PCT" '$10 > lo || $11 > ls { n++ } END { print n + 0 }' "$TMP/rounds")
if [ "$n_dist" -gt 0 ]; then
    echo
    echo "$n_dist of $(wc -l < "$TMP/rounds") rounds were disturbed (⚠ below). The same over the undisturbed rounds only:"
    echo
    summary_table clean
fi
echo
echo "Each round (latency of the requests due in the window; n: how many; threads: jitter by the daemon's dump / confined by their CPU mask, of all; confined: which):"
echo
echo "| service | round | daemon | p50 | p99 | max | n | CPU $IDLE_CPU wake-ups/s | CPU $IDLE_CPU idle | busy job ops/s | CPU 0 steal | other load | steal | service threads | client threads | confined | daemon's plan |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# shellcheck disable=SC2034
while read -r r svc cond p50 p99 max n wk idle other steal ops sn sj sc cn cj cc who plan st0; do
    [ "$cond" = on ] && d="shipped" || d="–"
    [ "$cond" = on ] || { sj="-"; cj="-"; }
    dist=$(awk -v o="$other" -v st="$steal" -v lo="$DISTURBED_OTHER_PCT" -v ls="$DISTURBED_STEAL_PCT" 'BEGIN { if (o > lo || st > ls) print " ⚠" }')
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s%% | %s | %s%% | %s%% | %s%%%s | %s / %s of %s | %s / %s of %s | %s | %s |\n' \
        "$svc" "$r" "$d" "$(us "$p50")" "$(us "$p99")" "$(us "$max")" "$n" "$wk" "$idle" "$ops" "$st0" "$other" "$steal" "$dist" \
        "$sj" "$sc" "$sn" "$cj" "$cc" "$cn" "${who//,/, }" "${plan//_/ }"
done < "$TMP/rounds"
echo
awk '$3 == "off" && ($15 + $18) > 0 { bad++ } END { if (bad) printf "**%d rounds without the daemon found threads still confined**: a mask the daemon did not give back.\n\n", bad }' "$TMP/rounds"
cat "$TMP/kv"
