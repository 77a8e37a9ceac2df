#!/usr/bin/env bash
# bench/cdn.sh: `lockstep cdn check` over N assets (default 10,000) on a
# loopback nginx, on two servers of the same tree: plain HTTP/1.1, against
# curl --parallel --parallel-max 64 -I over the same URLs, and HTTP/2 over
# TLS (ALPN), against curl --http2 with the same flags on that server. Also
# measured, in the same turns: lockstep over TLS held to HTTP/1.1 with
# --concurrency 64 and 128 connections (GODEBUG=http2client=0), the
# alternative to HTTP/2, and wrk's and hey's rates on the plain server.
# Prints a Markdown table (the figures of docs/benchmarks.md) and the load,
# with each run's CPU seconds (user + system) and nginx's (its worker's, from
# /proc, before and after the run): the server's share, the same for both
# clients. BEFORE=BIN also runs BIN's check on both servers each turn (role
# `before`): a change's before/after in the same interleaved run.
#
#   bench/cdn.sh [N]          N assets (default 10000; 100000 sets up in seconds)
#   CONCURRENCY=64 RUNS=3     lockstep's --concurrency; RUNS turns each
#   H1TLS=0                   no HTTP/1.1-over-TLS runs (bench/run.sh's)
#   SYSROOTS=1                also lockstep over HTTP/2 trusting the system's
#                             certificate directories too, as before 196b437
#                             (row lockstep-h2-sysroots, run through env; with
#                             BEFORE, row before-h2-sysroots too)
#   BEFORE=BIN                also BIN's check, role before
#   QUICK=1                   no wrk, hey, --full or HTTP/1.1-over-TLS runs
#                             (bench/run.sh's test)
# Each turn is also a `bench` line (bench/lib.sh) for bench/run.sh: cdn-N
# (plain HTTP/1.1) and cdn-h2-N (HTTP/2 over TLS).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
exec 3>&1
QUICK=${QUICK:-0}
N=${1:-10000}
CONCURRENCY=${CONCURRENCY:-64}
RUNS=${RUNS:-3}
H1TLS=${H1TLS:-1}
SYSROOTS=${SYSROOTS:-0}
BEFORE=${BEFORE:-}
[ "$QUICK" != 1 ] || H1TLS=0
for bin in nginx curl openssl python3; do
	command -v "$bin" >/dev/null || [ -x "/usr/sbin/$bin" ] || { echo "bench/cdn.sh: $bin is not installed (scripts/install-deps.sh)" >&2; exit 1; }
done
[ "$QUICK" = 1 ] || command -v wrk >/dev/null || { echo "bench/cdn.sh: wrk is not installed (scripts/install-deps.sh)" >&2; exit 1; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench/cdn.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

DIR=$(mktemp -d /tmp/lockstep-bench-cdn.XXXXXX)
NGINX_PID=
cleanup() { [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$DIR"; }
trap cleanup EXIT

echo "== building lockstep and bench/cdntree" >&2
LOCKSTEP=$(lockstep_bin "$DIR")
go build -o "$DIR/cdntree" ./bench/cdntree

PORT=$(free_port)
TLS_PORT=$(free_port)
BASE="http://127.0.0.1:$PORT"
TLS_BASE="https://127.0.0.1:$TLS_PORT"

echo "== generating $N assets, their manifests and curl configs" >&2
# manifest-0.json and curl-0.conf name the plain server, -1 the TLS one.
"$DIR/cdntree" -n "$N" "$DIR" "$BASE" "$TLS_BASE"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=127.0.0.1" \
	-addext "subjectAltName=IP:127.0.0.1" -keyout "$DIR/key.pem" -out "$DIR/cert.pem" 2>/dev/null
# Both clients trust this certificate and nothing else: curl gets --cacert,
# lockstep (Go) SSL_CERT_FILE, and an empty SSL_CERT_DIR, since Go reads
# every certificate of the system's directory (/etc/ssl/certs) besides the
# file: about 10 ms more a process here, which curl, with --cacert, never
# pays (docs/benchmarks.md, "The system's roots").
export SSL_CERT_FILE=$DIR/cert.pem
mkdir -p "$DIR/certs"
export SSL_CERT_DIR=$DIR/certs

echo "== starting nginx on $BASE and $TLS_BASE (HTTP/2)" >&2
nginx_conf "$DIR/nginx" 4096 <<CONF
  access_log off;
  open_file_cache max=$((N < 15000 ? N + 1000 : 16000)); # open descriptors: under the hard limit (often 20,000)
  root $DIR/root;
  server { listen 127.0.0.1:$PORT; }
  server {
    listen 127.0.0.1:$TLS_PORT ssl http2;
    ssl_certificate $DIR/cert.pem;
    ssl_certificate_key $DIR/key.pem;
  }
CONF
"$NGINX" -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" &
NGINX_PID=$! # master_process off: this process is the worker
ONE=$(sed -n '1s/^url = "\(.*\)"$/\1/p' "$DIR/curl-0.conf") # an asset on the plain server
for _ in $(seq 100); do curl -sf -o /dev/null "$ONE" && break; sleep 0.1; done

CURL=(curl -s --no-progress-meter --parallel --parallel-max 64 -I)
# Warm nginx's open-file cache (the tree was just written: the page cache
# holds it) where it holds every file, and lockstep's binary.
if [ "$N" -lt 15000 ]; then
	"${CURL[@]}" -K "$DIR/curl-0.conf" >/dev/null 2>&1
	"${CURL[@]}" --cacert "$DIR/cert.pem" --http2 -K "$DIR/curl-1.conf" >/dev/null 2>&1
fi
"$LOCKSTEP" --log-level error cdn check --manifest "$DIR/manifest-0.json" --sample 1 >/dev/null

# wrk cannot do HEAD (its parser waits for the body a HEAD response
# announces), so it GETs one asset (200 B-4 KiB): a little more work per request
# for nginx than a HEAD. hey's HEAD rate is printed beside it.
WRK_RPS=0 HEY_RPS=0
if [ "$QUICK" != 1 ]; then
	echo "== wrk (GET, 2 threads, 64 connections, 5 s)" >&2
	WRK_RPS=$(wrk -t2 -c64 -d5s "$ONE" | awk '/Requests\/sec/ { print $2 }')
fi
if [ "$QUICK" != 1 ] && command -v hey >/dev/null; then
	echo "== hey (HEAD, 64 connections, 5 s)" >&2
	HEY_RPS=$(hey -z 5s -c 64 -m HEAD "$ONE" | awk '/Requests\/sec/ { print $2 }')
fi

# nginx_ticks prints the CPU nginx has used (user + system, clock ticks).
nginx_ticks() { awk '{ print $14 + $15 }' "/proc/$NGINX_PID/stat"; }
TICK=$(getconf CLK_TCK)
# timed NAME ROLE LABEL CMD...: one timed run: its wall time (to 0.1 ms),
# peak RSS, CPU seconds and nginx's CPU seconds appended to DIR/NAME.times,
# a bench line when ROLE is set.
timed() {
	local name=$1 role=$2 label=$3 t0 t n0
	shift 3
	n0=$(nginx_ticks)
	t0=$(now_ns)
	"$TIME" -f '%M %U %S' -o "$DIR/time.out" "$@" >"$DIR/out" 2>/dev/null
	t=$(echo "scale=4; ($(now_ns) - $t0) / 1000000000" | bc)
	echo "$t $(awk -v n="$(( $(nginx_ticks) - n0 ))" -v tick="$TICK" '{ print $1, $2 + $3, n / tick }' "$DIR/time.out")" >>"$DIR/$name.times"
	if [ -n "$role" ]; then sample "$label" "$role" "$t" s "$name, $N HEADs" >&3; fi
}
# check MANIFEST CONCURRENCY [ENV...] runs lockstep cdn check --format json;
# checkcmd sets CMD to that command, for timed.
# Without extra variables CMD runs lockstep itself, as curl is run: env would
# add an exec to lockstep's time only.
checkcmd() {
	CMD=("${BIN:-$LOCKSTEP}" --log-level error cdn check --manifest "$1" --concurrency "$2" --format json)
	if [ $# -gt 2 ]; then CMD=(env "${@:3}" "${CMD[@]}"); fi
}
check() { checkcmd "$@" && "${CMD[@]}"; }
durations() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["durationNanos"] / 1e9)' "$DIR/out" >>"$DIR/$1.check"; }
# turn NAME LABEL MANIFEST CONCURRENCY [ENV...]: one timed check of
# MANIFEST by lockstep (DIR/lockstep-NAME.times and .check) and, when
# BEFORE is set, by that build (before-NAME): bench lines labelled LABEL,
# none when LABEL is empty.
turn() {
	local name=$1 label=$2
	shift 2
	checkcmd "$@"
	timed "lockstep-$name" "${label:+lockstep}" "$label" "${CMD[@]}"
	durations "lockstep-$name"
	if [ -n "$BEFORE" ]; then
		BIN=$BEFORE checkcmd "$@"
		timed "before-$name" "${label:+before}" "$label" "${CMD[@]}"
		durations "before-$name"
	fi
}

echo "== $RUNS turns: lockstep and curl on HTTP/1.1, then on HTTP/2 over TLS$([ "$H1TLS" = 0 ] || echo ', then lockstep on HTTP/1.1 over TLS')" >&2
for _ in $(seq "$RUNS"); do
	turn h1 "cdn-$N" "$DIR/manifest-0.json" "$CONCURRENCY"
	timed curl-h1 anchor "cdn-$N" "${CURL[@]}" -K "$DIR/curl-0.conf"
	turn h2 "cdn-h2-$N" "$DIR/manifest-1.json" "$CONCURRENCY"
	timed curl-h2 anchor "cdn-h2-$N" "${CURL[@]}" --cacert "$DIR/cert.pem" --http2 -K "$DIR/curl-1.conf"
	if [ "$SYSROOTS" = 1 ]; then
		# SSL_CERT_DIR empty: Go's default directories, /etc/ssl/certs.
		turn h2-sysroots "" "$DIR/manifest-1.json" "$CONCURRENCY" SSL_CERT_DIR=
	fi
	if [ "$H1TLS" != 0 ]; then
		checkcmd "$DIR/manifest-1.json" "$CONCURRENCY" GODEBUG=http2client=0
		timed lockstep-h1-tls "" "" "${CMD[@]}"
		durations lockstep-h1-tls
		checkcmd "$DIR/manifest-1.json" 128 GODEBUG=http2client=0
		timed lockstep-h1-tls-128 "" "" "${CMD[@]}"
		durations lockstep-h1-tls-128
	fi
done

FULL="0 0"
if [ "$QUICK" != 1 ]; then
	echo "== lockstep cdn check --full (HTTP/1.1)" >&2
	"$TIME" -f '%e %M' -o "$DIR/time.out" "$LOCKSTEP" --log-level error cdn check --manifest "$DIR/manifest-0.json" \
		--concurrency "$CONCURRENCY" --full --format json >/dev/null
	FULL=$(cat "$DIR/time.out")
fi
check "$DIR/manifest-0.json" "$CONCURRENCY" >"$DIR/out"
OK=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["ok"], s["requests"], s["retries"], s["comparedBytes"])' "$DIR/out")

python3 - "$DIR" "$N" "$WRK_RPS" "$HEY_RPS" "$FULL" "$OK" <<'PY'
import os, statistics, sys
d, n, wrk, hey, full, ok = sys.argv[1:]
n, wrk, hey = int(n), float(wrk), float(hey)
full_wall, full_rss = (float(x) for x in full.split())
ok, req, retries, by_bytes = ok.split()
def times(name, col=0):
    p = os.path.join(d, name)
    if not os.path.exists(p):
        return []
    return [float(line.split()[col]) for line in open(p) if line.strip()]
def mm(v):
    return f"{min(v):.3f} / {statistics.median(v):.3f} s" if v else "not run"
print(f"{n} assets ({ok} ok, {req} requests, {retries} retries, {by_bytes} compared by bytes, on HTTP/1.1); min / median of the turns")
print()
print("| run | wall, min / median | the check alone (`durationNanos`), min / median | CPU, min / median | nginx's CPU, min / median | peak RSS | lockstep / curl (medians) |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for name, label, anchor in [
    ("lockstep-h1", "`lockstep cdn check`, HTTP/1.1", "curl-h1"),
    ("before-h1", "`BEFORE`'s check, HTTP/1.1", "curl-h1"),
    ("curl-h1", "`curl --parallel --parallel-max 64 -I`, HTTP/1.1", None),
    ("lockstep-h2", "`lockstep cdn check`, HTTP/2 over TLS", "curl-h2"),
    ("before-h2", "`BEFORE`'s check, HTTP/2 over TLS", "curl-h2"),
    ("curl-h2", "`curl --http2 --parallel --parallel-max 64 -I`, HTTP/2 over TLS", None),
    ("lockstep-h2-sysroots", "`lockstep cdn check`, HTTP/2 over TLS, the system's directories read too (SYSROOTS=1)", "curl-h2"),
    ("before-h2-sysroots", "`BEFORE`'s check, the same", "curl-h2"),
    ("lockstep-h1-tls", "`lockstep cdn check`, HTTP/1.1 over TLS (GODEBUG=http2client=0)", "curl-h2"),
    ("lockstep-h1-tls-128", "the same, --concurrency 128", "curl-h2"),
]:
    w = times(name + ".times")
    if not w:
        continue
    c = times(name + ".check")
    rss = max(times(name + ".times", 1)) / 1024
    ratio = ""
    if anchor and times(anchor + ".times"):
        ratio = f"{statistics.median(w) / statistics.median(times(anchor + '.times')):.2f}"
    print(f"| {label} | {mm(w)} | {mm(c) if c else ''} | {mm(times(name + '.times', 2))} | {mm(times(name + '.times', 3))} | {rss:.0f} MiB | {ratio} |")
print()
if wrk:
    lw = statistics.median(times("lockstep-h1.times"))
    lc = statistics.median(times("lockstep-h1.check"))
    print(f"wrk GET rate on the plain server {wrk:,.0f} req/s (hey HEAD {hey:,.0f} req/s); lockstep's rate, median, "
          f"process {n / lw:,.0f}/s = {100 * n / lw / wrk:.0f}% of wrk's, the check alone {n / lc:,.0f}/s = {100 * n / lc / wrk:.0f}%")
if full_wall:
    print(f"`--full` (HTTP/1.1): {full_wall:.2f} s, peak RSS {full_rss / 1024:.0f} MiB")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores" >&2
