#!/usr/bin/env bash
# bench/closure.sh: what the boot gate's default check costs (issue 34,
# "Cost and safety"). The build is scenario.ClosureBuild of ASSETS assets:
# one page per 500 assets, each loading its own tree of assets, a tenth of
# the build in all; the probed page names the first page's roots, and the
# default closure starts from every page. Against it:
#
#	closure               admission.BenchmarkClosure in process, loopback: p50 of RUNS checks,
#	                      the closure against --all-assets (requests and CDN bytes as comments)
#	closure-nginx         lockstep admit (the process), the closure, against admit --all-assets,
#	                      the CDN a real nginx on loopback
#	closure-rtt30         the same through toxiproxy: LATENCY_MS (30) added to every answer
#	closure-rtt30-curl    admit's closure against curl --parallel --parallel-max 16 -I of the
#	                      same URLs over the same link (the gate holds 16 connections to a host)
#	closure-rtt30-limit   admit's closure against the physical limit: ceil(CDN requests / 16)
#	                      round trips of the RTT measured in that round
#	all-assets-rtt30-curl admit --all-assets against curl --parallel of every URL
#	closure-rtt30-bytes   the CDN bytes (requests and answers, nginx's count) of the closure
#	                      against those of --all-assets
#	closure-gates         GATES (1,000) gates booting at once in one process against one
#	                      counting CDN: the CDN requests per gate, against the closure's size
#	                      (one HEAD an asset)
#	closure-gates-outage  the same when the CDN answers 503 for OUTAGE (1 s) from its first request
#	closure-gates-peak    the busiest 100 ms of the healthy storm against its mean 100 ms
#
# Rounds interleave (A B A B ...): each round runs every variant once, so
# that all share the machine's changing load. Every round's requests,
# bytes, RTT and limit are printed as a table; bench/run.sh takes the
# `bench` lines (min, median and ratio of medians).
#
#   bench/closure.sh          ROUNDS=5 RUNS=20 ASSETS=10000 GATES=1000 LATENCY_MS=30 OUTAGE=1s
#   QUICK=1 bench/closure.sh  ASSETS=500 ROUNDS=1 RUNS=2 GATES=200: checks the script, measures nothing
#
# Needs nginx, curl, bc and toxiproxy-server (scripts/install-deps.sh builds
# it once per machine into .cache/bin).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	ASSETS=${ASSETS:-500} ROUNDS=${ROUNDS:-1} RUNS=${RUNS:-2} GATES=${GATES:-200}
fi
ASSETS=${ASSETS:-10000}
ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-20}
GATES=${GATES:-1000}
LATENCY_MS=${LATENCY_MS:-30}
OUTAGE=${OUTAGE:-1s}
CONNS=16 # transport.DefaultPolicy's MaxConnsPerHost: the gate's connections to one host
# GATES gates in one process hold up to CONNS connections each, and the
# CDN the other ends: 1,000 gates need over 32,000 descriptors, where a
# real fleet spreads them over 1,000 machines. Past the limit the gates
# fail on their own accept(2) errors ("too many open files"), which the
# storm would count as gates that could not check: raise the limit, as
# far as this user may, and say what it is.
need_fds=$((GATES * CONNS * 2 + 4096))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$need_fds" ]; then
	ulimit -Hn "$need_fds" 2>/dev/null || true
	ulimit -n "$need_fds" 2>/dev/null || ulimit -n "$(ulimit -Hn)"
fi
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$need_fds" ]; then
	echo "bench/closure.sh: $GATES gates need $need_fds file descriptors and this user may open $(ulimit -n): the storm's could-not-check counts are the limit's, not the gates' (run as root, or GATES=$(( ($(ulimit -n) - 4096) / CONNS / 2 )))" >&2
fi
TOXIPROXY=${TOXIPROXY:-.cache/bin/toxiproxy-server}
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
for bin in "$NGINX" "$TOXIPROXY"; do
	[ -x "$bin" ] || command -v "$bin" >/dev/null || { echo "bench/closure.sh: $bin is missing (scripts/install-deps.sh)" >&2; exit 1; }
done
for bin in curl bc; do
	command -v "$bin" >/dev/null || { echo "bench/closure.sh: $bin is missing (scripts/install-deps.sh)" >&2; exit 1; }
done
exec 3>&1

DIR=$(mktemp -d /tmp/lockstep-bench-closure.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$DIR"
}
trap cleanup EXIT

echo "== building lockstep, bench/closurenet and the admission test binary" >&2
LOCKSTEP=$(lockstep_bin "$DIR")
go build -o "$DIR/closurenet" ./bench/closurenet
go test -c -o "$DIR/admission.test" ./admission/

CDN_PORT=$(free_port) APP_PORT=$(free_port) APP_RTT_PORT=$(free_port) PROXY_PORT=$(free_port) API_PORT=$(free_port)
echo "== writing the build of $ASSETS assets twice: under the CDN (loopback) and under the proxy" >&2
"$DIR/closurenet" write -assets "$ASSETS" -cdn "http://127.0.0.1:$CDN_PORT/" -dir "$DIR/lo" >"$DIR/counts"
"$DIR/closurenet" write -assets "$ASSETS" -cdn "http://127.0.0.1:$PROXY_PORT/" -dir "$DIR/rtt" >/dev/null
read -r PAGES CLOSURE ALL < <(sed 's/[a-z]*=//g' "$DIR/counts")
CONF=$(cat "$DIR/lo/config.txt")

nginx_conf "$DIR/nginx" 8192 <<CONF
  log_format sizes '\$request_length \$bytes_sent';
  access_log off;
  server { listen 127.0.0.1:$CDN_PORT; root $DIR/lo/cdn; access_log $DIR/cdn.log sizes; }
  server { listen 127.0.0.1:$APP_PORT; root $DIR/lo/app; default_type text/html; }
  server { listen 127.0.0.1:$APP_RTT_PORT; root $DIR/rtt/app; default_type text/html; }
CONF
"$NGINX" -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" &
PIDS+=($!)
"$TOXIPROXY" -host 127.0.0.1 -port "$API_PORT" >"$DIR/toxiproxy.log" 2>&1 &
PIDS+=($!)
API=http://127.0.0.1:$API_PORT
for _ in $(seq 100); do
	curl -sf -o /dev/null "http://127.0.0.1:$APP_PORT/index.html" && curl -sf -o /dev/null "$API/version" && break
	sleep 0.1
done
curl -sf -o /dev/null -X POST "$API/proxies" -d "{\"name\":\"cdn\",\"listen\":\"127.0.0.1:$PROXY_PORT\",\"upstream\":\"127.0.0.1:$CDN_PORT\",\"enabled\":true}"
curl -sf -o /dev/null -X POST "$API/proxies/cdn/toxics" -d "{\"name\":\"rtt\",\"type\":\"latency\",\"stream\":\"downstream\",\"toxicity\":1,\"attributes\":{\"latency\":$LATENCY_MS,\"jitter\":0}}"

# rtt prints the round trip through the proxy in ms: the least of 5 HEADs'
# time from the request sent to the first byte, on a connection already open.
rtt() {
	local one=$DIR/rtt/cdn/pages/p0000.html u="http://127.0.0.1:$PROXY_PORT/pages/p0000.html" best=
	[ -e "$one" ] || { echo "bench/closure.sh: no page p0000" >&2; exit 1; }
	for _ in 1 2 3 4 5; do
		t=$(curl -s -o /dev/null -I -w '%{time_starttransfer} %{time_pretransfer}\n' "$u" | awk '{ printf "%.3f", ($1 - $2) * 1000 }')
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
	done
	echo "$best"
}

# cdn_reset empties nginx's CDN log; cdn_count prints "REQUESTS BYTES" of it.
cdn_reset() { : >"$DIR/cdn.log"; }
cdn_count() { awk '{ n++; b += $1 + $2 } END { printf "%d %d\n", n, b }' "$DIR/cdn.log"; }

# admit SIDE [FLAGS...] runs lockstep admit of SIDE's (lo or rtt) page and
# prints "MS REQUESTS BYTES": its wall time and what reached the CDN.
admit() {
	local side=$1 app=$APP_PORT state t0 t
	shift
	[ "$side" = rtt ] && app=$APP_RTT_PORT
	state=$(mktemp -d "$DIR/state.XXXXXX")
	cdn_reset
	t0=$(now_ns)
	if ! "$LOCKSTEP" --log-level error admit --manifest "$DIR/$side/release.json" --release store-web --state-dir "$state" \
		--insecure-allow-unsigned --image web --running "digest:$CONF" --platform linux/amd64 \
		--probe "http://127.0.0.1:$app/index.html" --timeout 120s "$@" >"$DIR/admit.out" 2>"$DIR/admit.err"; then
		echo "bench/closure.sh: admit $side $* refused:" >&2
		tail -20 "$DIR/admit.out" "$DIR/admit.err" >&2
		exit 1
	fi
	t=$(ms_since "$t0")
	rm -rf "$state"
	sleep 0.2 # nginx writes its log line after the answer
	echo "$t $(cdn_count)"
}

# curl_all CONFIG prints "MS REQUESTS BYTES" of curl --parallel HEADs of
# the URLs of CONFIG through the proxy.
curl_all() {
	local t0 t
	cdn_reset
	t0=$(now_ns)
	curl -s --no-progress-meter --parallel --parallel-max "$CONNS" -I -K "$1" >/dev/null
	t=$(ms_since "$t0")
	sleep 0.2
	echo "$t $(cdn_count)"
}

# The gate's process and nginx warm once, through both links.
admit lo >/dev/null
admit rtt >/dev/null

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo "# build: $ASSETS assets and $PAGES pages ($ALL files); the default closure from every page: $CLOSURE assets; the link: +$LATENCY_MS ms on every answer (toxiproxy v2.5.0 latency, downstream), $CONNS connections"
echo "| round | link | what | ms | CDN requests | CDN bytes | RTT ms | limit ms |"
echo "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |"
limit() { echo "scale=1; (($1 + $CONNS - 1) / $CONNS) * $2" | bc; } # REQUESTS RTT: whole round trips on CONNS connections
row() { echo "| $1 | $2 | $3 | $4 | $5 | $6 | $7 | $8 |"; }
for r in $(seq "$ROUNDS"); do
	# In process, loopback: BenchmarkClosure's two variants.
	for v in closure all-assets; do
		LOCKSTEP_BENCH_ASSETS=$ASSETS "$DIR/admission.test" -test.run '^$' -test.bench "^BenchmarkClosure\$/^$v\$" -test.benchtime "${RUNS}x" -test.count 1 |
			awk -v v="$v" -v runs="$RUNS" -v assets="$ASSETS" -v r="$r" '/^Benchmark/ {
				for (i = 3; i < NF; i += 2) m[$(i + 1)] = $i
				role = (v == "closure") ? "lockstep" : "anchor"
				label = (v == "closure") ? "admit (the closure from every page, in process)" : "admit --all-assets (in process)"
				printf "| %d | in process | %s | %s (p50 of %d) | %s | %s | | |\n", r, v, m["p50-ms"], runs, m["requests/check"], m["cdn-bytes/check"] >"/dev/stderr"
				printf "bench closure %s %s ms %s, %d assets: %s requests, %s CDN bytes, p50 of %d checks\n", role, m["p50-ms"], label, assets, m["requests/check"], m["cdn-bytes/check"], runs }' 2>>"$DIR/inproc"
	done
	read -r lo_ms lo_req lo_bytes < <(admit lo)
	read -r loa_ms loa_req loa_bytes < <(admit lo --all-assets)
	RTT=$(rtt)
	read -r c_ms c_req c_bytes < <(admit rtt)
	read -r cc_ms cc_req cc_bytes < <(curl_all "$DIR/rtt/closure.curl")
	read -r a_ms a_req a_bytes < <(admit rtt --all-assets)
	read -r ac_ms ac_req ac_bytes < <(curl_all "$DIR/rtt/all.curl")
	c_lim=$(limit "$c_req" "$RTT") a_lim=$(limit "$a_req" "$RTT")
	row "$r" loopback "admit (closure)" "$lo_ms" "$lo_req" "$lo_bytes" "" ""
	row "$r" loopback "admit --all-assets" "$loa_ms" "$loa_req" "$loa_bytes" "" ""
	row "$r" "+${LATENCY_MS} ms" "admit (closure)" "$c_ms" "$c_req" "$c_bytes" "$RTT" "$c_lim"
	row "$r" "+${LATENCY_MS} ms" "curl --parallel, the closure's URLs" "$cc_ms" "$cc_req" "$cc_bytes" "$RTT" "$c_lim"
	row "$r" "+${LATENCY_MS} ms" "admit --all-assets" "$a_ms" "$a_req" "$a_bytes" "$RTT" "$a_lim"
	row "$r" "+${LATENCY_MS} ms" "curl --parallel, every URL" "$ac_ms" "$ac_req" "$ac_bytes" "$RTT" "$a_lim"
	sample closure-nginx lockstep "$lo_ms" ms "admit (closure from every page), nginx on loopback, $lo_req CDN requests" >&3
	sample closure-nginx anchor "$loa_ms" ms "admit --all-assets, nginx on loopback, $loa_req CDN requests" >&3
	sample closure-rtt30 lockstep "$c_ms" ms "admit (closure), +${LATENCY_MS} ms (toxiproxy), $c_req CDN requests" >&3
	sample closure-rtt30 anchor "$a_ms" ms "admit --all-assets, +${LATENCY_MS} ms, $a_req CDN requests" >&3
	sample closure-rtt30-curl lockstep "$c_ms" ms "admit (closure), +${LATENCY_MS} ms" >&3
	sample closure-rtt30-curl anchor "$cc_ms" ms "curl --parallel-max $CONNS -I of the closure's $cc_req URLs, same link" >&3
	sample closure-rtt30-limit lockstep "$c_ms" ms "admit (closure), +${LATENCY_MS} ms" >&3
	sample closure-rtt30-limit anchor "$c_lim" ms "ceil($c_req / $CONNS) round trips of $RTT ms (measured)" >&3
	sample all-assets-rtt30-curl lockstep "$a_ms" ms "admit --all-assets, +${LATENCY_MS} ms" >&3
	sample all-assets-rtt30-curl anchor "$ac_ms" ms "curl --parallel-max $CONNS -I of every URL ($ac_req), same link" >&3
	sample closure-rtt30-bytes lockstep "$(echo "scale=1; $c_bytes / 1000" | bc)" kB "CDN bytes of admit (closure), requests and answers" >&3
	sample closure-rtt30-bytes anchor "$(echo "scale=1; $a_bytes / 1000" | bc)" kB "CDN bytes of admit --all-assets" >&3
done
echo
cat "$DIR/inproc"

echo
echo "# $GATES gates booting at once (bench/closurenet storm, one process, one loopback CDN that counts), $ASSETS assets, open files limit $(ulimit -n)"
echo "| round | CDN | requests | per gate | closure | requests - gates × closure (retries; below 0: gates that gave up) | busiest 100 ms | at ms | span ms | allowed | could not check | p50 ms | p99 ms |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for r in $(seq "$ROUNDS"); do
	for outage in 0s "$OUTAGE"; do
		"$DIR/closurenet" storm -assets "$ASSETS" -gates "$GATES" -outage "$outage" >"$DIR/storm.out"
		grep '^#' "$DIR/storm.out" >"$DIR/storm-$r-$outage.buckets" || true
		line=$(grep '^storm ' "$DIR/storm.out")
		kv() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
		what=healthy
		[ "$outage" = 0s ] || what="503 for its first $outage"
		echo "| $r | $what | $(kv requests) | $(kv per-gate) | $(kv closure) | $(kv retries) | $(kv peak-100ms) | $(kv peak-at-ms) | $(kv span-ms) | $(kv allowed) | $(kv unverified) | $(kv p50-ms) | $(kv p99-ms) |"
		if [ "$outage" = 0s ]; then
			sample closure-gates lockstep "$(kv per-gate)" req "CDN requests per gate, $GATES gates at once" >&3
			sample closure-gates anchor "$(kv closure)" req "the closure's assets (one HEAD each)" >&3
			mean=$(echo "scale=1; $(kv requests) * 100 / $(kv span-ms)" | bc)
			sample closure-gates-peak lockstep "$(kv peak-100ms)" req "the busiest 100 ms at the CDN, $GATES gates at once" >&3
			sample closure-gates-peak anchor "$mean" req "the mean 100 ms over the storm's $(kv span-ms) ms" >&3
		else
			sample closure-gates-outage lockstep "$(kv per-gate)" req "CDN requests per gate, $GATES gates, 503 for the first $outage ($(kv unverified) could not check)" >&3
			sample closure-gates-outage anchor "$(kv closure)" req "the closure's assets (one HEAD each)" >&3
		fi
	done
done
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
