#!/usr/bin/env bash
# bench/cdn.sh: `lockstep cdn check` over N assets (default 10,000) on a
# loopback nginx, against wrk's HEAD request rate on the same server and
# against curl --parallel --parallel-max 64 -I over the same URLs. Prints a
# Markdown table (the figures of docs/benchmarks.md) and the machine's load.
#
#   bench/cdn.sh [N]          N assets (default 10000)
#   CONCURRENCY=64 RUNS=3     lockstep's --concurrency; best of RUNS
#   QUICK=1                   no wrk, hey or --full run (bench/run.sh's test)
# lockstep and curl take turns, run after run; each run is also a `bench`
# line (bench/lib.sh) for bench/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
exec 3>&1
QUICK=${QUICK:-0}
N=${1:-10000}
CONCURRENCY=${CONCURRENCY:-64}
RUNS=${RUNS:-3}
for bin in nginx wrk curl; do
	command -v "$bin" >/dev/null || [ -x "/usr/sbin/$bin" ] || { echo "bench/cdn.sh: $bin is not installed (scripts/install-deps.sh)" >&2; exit 1; }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench/cdn.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

DIR=$(mktemp -d /tmp/lockstep-bench-cdn.XXXXXX)
NGINX_PID=
cleanup() { [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$DIR"; }
trap cleanup EXIT

echo "== building lockstep" >&2
LOCKSTEP=$(lockstep_bin "$DIR")

echo "== generating $N assets" >&2
mkdir -p "$DIR/root" "$DIR/nginx/logs" "$DIR/nginx/tmp"
# Files of 200 B to 4 KiB in 100 directories.
awk -v n="$N" -v root="$DIR/root" 'BEGIN {
	srand(42)
	for (d = 0; d < 100; d++) system("mkdir -p " root "/static/" d)
	for (i = 0; i < n; i++) {
		f = sprintf("%s/static/%d/asset-%05d.js", root, i % 100, i)
		size = 200 + int(rand() * 3900)
		line = sprintf("/* %05d */", i)
		while (length(line) < size) line = line "x"
		printf "%s", substr(line, 1, size) > f
		close(f)
	}
}'

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"

echo "== writing the manifest" >&2
(cd "$DIR/root" && find static -type f | LC_ALL=C sort | xargs sha256sum) >"$DIR/sums"
FINGERPRINT=$(sha256sum <"$DIR/sums" | cut -d' ' -f1)
(cd "$DIR/root" && cut -c67- "$DIR/sums" | xargs stat -c '%s') >"$DIR/sizes"
paste -d' ' "$DIR/sums" "$DIR/sizes" | awk -v base="$BASE/" -v fp="$FINGERPRINT" '
	BEGIN { printf "{\"apiVersion\":\"lockstep.dev/v1\",\"kind\":\"ReleaseManifest\",\"release\":{\"name\":\"bench\",\"generation\":1,\"createdAt\":\"2026-12-01T00:00:00Z\"},\"images\":[],\"assets\":{\"cdn\":[\"%s\"],\"files\":[", base }
	{ printf "%s{\"path\":\"%s\",\"size\":%d,\"sha256\":\"%s\"}", (NR > 1 ? "," : ""), $2, $3, $1 }
	END { printf "],\"fingerprint\":\"sha256:%s\"}}\n", fp }' >"$DIR/manifest.json"
"$LOCKSTEP" --log-level error cdn check --manifest "$DIR/manifest.json" --sample 1 >/dev/null 2>&1 || true
awk -v base="$BASE" '{ printf "url = \"%s/%s\"\noutput = \"/dev/null\"\n", base, $2 }' "$DIR/sums" >"$DIR/curl.conf"

echo "== starting nginx on $BASE" >&2
cat >"$DIR/nginx/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
error_log $DIR/nginx/logs/error.log warn;
pid $DIR/nginx/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $DIR/nginx/tmp;
  proxy_temp_path $DIR/nginx/tmp;
  fastcgi_temp_path $DIR/nginx/tmp;
  uwsgi_temp_path $DIR/nginx/tmp;
  scgi_temp_path $DIR/nginx/tmp;
  default_type application/javascript;
  keepalive_requests 100000;
  open_file_cache max=20000;
  server { listen 127.0.0.1:$PORT; root $DIR/root; }
}
CONF
"$NGINX" -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" &
NGINX_PID=$!
for _ in $(seq 100); do curl -sf -o /dev/null "$BASE/static/0/asset-00000.js" && break; sleep 0.1; done

# Warm the page cache and nginx's open-file cache.
curl -s --no-progress-meter --parallel --parallel-max 64 -I -K "$DIR/curl.conf" >/dev/null 2>&1

# wrk cannot do HEAD (its parser waits for the body a HEAD response
# announces), so it GETs one ~2 KiB asset: a little more work per request
# for nginx than a HEAD. hey's HEAD rate is printed beside it.
WRK_RPS=0 HEY_RPS=0
if [ "$QUICK" != 1 ]; then
	echo "== wrk (GET, 2 threads, 64 connections, 5 s)" >&2
	WRK_RPS=$(wrk -t2 -c64 -d5s "$BASE/static/1/asset-00001.js" | awk '/Requests\/sec/ { print $2 }')
fi
if [ "$QUICK" != 1 ] && command -v hey >/dev/null; then
	echo "== hey (HEAD, 64 connections, 5 s)" >&2
	HEY_RPS=$(hey -z 5s -c 64 -m HEAD "$BASE/static/1/asset-00001.js" | awk '/Requests\/sec/ { print $2 }')
fi

best() { sort -n | head -1; }
echo "== lockstep cdn check (--concurrency $CONCURRENCY) and curl --parallel --parallel-max 64 -I, $RUNS runs each, in turn" >&2
: >"$DIR/ls.times"
: >"$DIR/ls.check"
: >"$DIR/curl.times"
secs() { echo "scale=4; ($(now_ns) - $1) / 1000000000" | bc; } # T0: seconds since, to 0.1 ms
for _ in $(seq "$RUNS"); do
	t0=$(now_ns)
	"$TIME" -f '%e %M' -o "$DIR/time.out" "$LOCKSTEP" --log-level error cdn check --manifest "$DIR/manifest.json" \
		--concurrency "$CONCURRENCY" --format json >"$DIR/report.json"
	t=$(secs "$t0")
	cat "$DIR/time.out" >>"$DIR/ls.times"
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["durationNanos"] / 1e9)' "$DIR/report.json" >>"$DIR/ls.check"
	sample "cdn-$N" lockstep "$t" s "lockstep cdn check, $N HEADs, process included" >&3
	t0=$(now_ns)
	"$TIME" -f '%e %M' -o "$DIR/time.out" curl -s --no-progress-meter --parallel --parallel-max 64 -I -K "$DIR/curl.conf" >/dev/null 2>&1
	t=$(secs "$t0")
	cat "$DIR/time.out" >>"$DIR/curl.times"
	sample "cdn-$N" anchor "$t" s "curl --parallel --parallel-max 64 -I, $N HEADs" >&3
done
LS_WALL=$(cut -d' ' -f1 "$DIR/ls.times" | best)
LS_CHECK=$(best <"$DIR/ls.check")
LS_RSS=$(cut -d' ' -f2 "$DIR/ls.times" | sort -n | tail -1)
LS_OK=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["ok"], s["requests"], s["retries"])' "$DIR/report.json")

FULL_WALL=0 FULL_RSS=0
if [ "$QUICK" != 1 ]; then
	echo "== lockstep cdn check --full" >&2
	"$TIME" -f '%e %M' -o "$DIR/time.out" "$LOCKSTEP" --log-level error cdn check --manifest "$DIR/manifest.json" \
		--concurrency "$CONCURRENCY" --full --format json >/dev/null
	FULL_WALL=$(cut -d' ' -f1 "$DIR/time.out"); FULL_RSS=$(cut -d' ' -f2 "$DIR/time.out")
fi
CURL_WALL=$(cut -d' ' -f1 "$DIR/curl.times" | best)

python3 - "$N" "$WRK_RPS" "$HEY_RPS" "$LS_CHECK" "$LS_WALL" "$LS_RSS" "$CURL_WALL" "$FULL_WALL" "$FULL_RSS" $LS_OK <<'PY'
import sys
n, wrk, hey, check, ls, rss, curl, full, full_rss, ok, req, retries = sys.argv[1:]
n, wrk, hey, check, ls, rss, curl, full, full_rss = int(n), float(wrk), float(hey), float(check), float(ls), int(rss), float(curl), float(full), int(full_rss)
rate = n / ls
crate = n / check
print(f"| measure | figure | target |")
print(f"| --- | --- | --- |")
print(f"| assets checked (HEAD) | {n} ({ok} ok, {req} requests, {retries} retries) | |")
print(f"| `lockstep cdn check` wall time (process, manifest parse included) | {ls:.2f} s ({rate:,.0f} assets/s) | |")
print(f"| the check itself (`summary.durationNanos`) | {check:.2f} s ({crate:,.0f} assets/s) | |")
print(f"| wrk GET rate, same server (hey HEAD rate) | {wrk:,.0f} req/s ({hey:,.0f} req/s) | |")
print(f"| lockstep rate / wrk rate (process; check only) | {100 * rate / wrk:.0f}%; {100 * crate / wrk:.0f}% | ≥ 50% |" if wrk else "| lockstep rate / wrk rate | not run (QUICK=1) | ≥ 50% |")
print(f"| `curl --parallel --parallel-max 64 -I` wall time | {curl:.2f} s | |")
print(f"| lockstep speed-up over curl | {curl / ls:.2f}× | ≥ 1.5× |")
print(f"| peak RSS (HEAD) | {rss / 1024:.0f} MiB | |")
print(f"| `--full` wall time, peak RSS | {full:.2f} s, {full_rss / 1024:.0f} MiB | |")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores" >&2
