#!/usr/bin/env bash
# Benchmarks `lockstep pin` of N tags (default 100) on a local Debian
# docker-registry (loopback only) against a loop of `crane digest` and
# against the floor of N/concurrency round trips. BEFORE=BIN also runs
# BIN's pins each round (role `before`): a change's before/after in the
# same interleaved run. Beside each wall time it reports the registry's own
# CPU time for that run (utime + stime of docker-registry, /proc), and the
# requests a cold pin sends (counted in the registry's access log, in a
# run before the timed ones). SHARED images (default 10; 0: none) are also
# tagged N times over (bench/app:s1..sN, as when several roles or tags
# name one image) and pinned with no cache (pin-shared; its anchor is the
# same crane loop, whose cost does not depend on what the tags share).
#
#   bench/pin.sh [N] [RUNS]        BEFORE= SHARED=10
#
# Needs docker-registry (scripts/install-deps.sh installs it); installs
# crane into .cache/bin when missing or another version, at the version
# scripts/install-deps.sh pins (CRANE_VERSION, v0.21.0). Prints the figures
# docs/benchmarks.md quotes. Each timed run is also a `bench` line
# (bench/lib.sh) for bench/run.sh; LOCKSTEP_BIN (a binary named lockstep)
# skips the build.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
N=${1:-100}
RUNS=${2:-5}
CONC=16
ROOT=$PWD
BIN=$ROOT/.cache/bin
mkdir -p "$BIN"
export PATH="$BIN:$PATH"

CRANE_VERSION=$(sed -n 's/^CRANE_VERSION=//p' scripts/install-deps.sh)
[ -n "$CRANE_VERSION" ] || { echo "no CRANE_VERSION in scripts/install-deps.sh" >&2; exit 1; }
if ! crane version 2>/dev/null | grep -qx "$CRANE_VERSION"; then
	echo "== installing crane $CRANE_VERSION" >&2
	(cd / && GOBIN=$BIN GOFLAGS=-mod=mod go install "github.com/google/go-containerregistry/cmd/crane@$CRANE_VERSION")
fi
if [ -n "${LOCKSTEP_BIN:-}" ]; then
	export PATH="$(dirname "$LOCKSTEP_BIN"):$PATH"
else
	echo "== building lockstep" >&2
	build_lockstep "$BIN/lockstep"
fi

REG=$(command -v docker-registry || echo /usr/bin/docker-registry)
[ -x "$REG" ] || { echo "docker-registry is not installed (scripts/install-deps.sh)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/lockstep-bench-pin.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
HOST=127.0.0.1:$PORT
REGPID=
# start_registry starts docker-registry, its access log on when $1 is false.
start_registry() {
	ACCESSLOG=$1
	cat >"$WORK/config.yml" <<CONF
version: 0.1
log:
  level: error
  accesslog:
    disabled: $ACCESSLOG
storage:
  filesystem:
    rootdirectory: $WORK/data
http:
  addr: $HOST
CONF
	"$REG" serve "$WORK/config.yml" >"$WORK/registry.log" 2>&1 &
	REGPID=$!
	for _ in $(seq 100); do
		curl -fsS "http://$HOST/v2/" >/dev/null 2>&1 && break
		sleep 0.1
	done
}
stop_registry() { kill "$REGPID" 2>/dev/null; wait "$REGPID" 2>/dev/null || true; }
trap 'stop_registry; rm -rf "$WORK"' EXIT
start_registry true

echo "== pushing $N tags to $HOST" >&2
mkdir -p "$WORK/layer" && echo hello >"$WORK/layer/hello.txt"
tar -C "$WORK/layer" -cf "$WORK/layer.tar" .
crane append --insecure -f "$WORK/layer.tar" -t "$HOST/bench/app:base" >/dev/null 2>&1
REFS=()
for i in $(seq 1 "$N"); do
	crane mutate --insecure --label "n=$i" -t "$HOST/bench/app:t$i" "$HOST/bench/app:base" >/dev/null 2>&1
	REFS+=("$HOST/bench/app:t$i")
done
SHARED=${SHARED:-10}
SREFS=()
if [ "$SHARED" -gt 0 ]; then
	echo "== tagging $SHARED images $N times over" >&2
	for i in $(seq 1 "$N"); do
		crane tag --insecure "$HOST/bench/app:t$(((i - 1) % SHARED + 1))" "s$i" >/dev/null 2>&1
		SREFS+=("$HOST/bench/app:s$i")
	done
fi

TICK=$(getconf CLK_TCK)
# the registry's CPU time so far (utime + stime), in clock ticks
regcpu() { awk '{print $14 + $15}' "/proc/$REGPID/stat"; }
# timed VARIANT CMD...: one run of CMD; its wall time (s) is appended to
# T[VARIANT], the registry's CPU time during it (s) to C[VARIANT], and the
# wall time is left in LAST.
declare -A T C
timed() {
	local v=$1 t0 t1 c0 c1
	shift
	c0=$(regcpu)
	t0=$(date +%s.%N)
	"$@" >/dev/null
	t1=$(date +%s.%N)
	c1=$(regcpu)
	LAST=$(echo "$t1 - $t0" | bc -l)
	T[$v]+=" $LAST"
	C[$v]+=" $(echo "($c1 - $c0) / $TICK" | bc -l)"
}
# best and median of a list of times
stats() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.3f %.3f\n", a[1], a[int((NR+1)/2)]}'; }
median() { stats "$@" | cut -d' ' -f2; }
crane_loop() { for r in "${REFS[@]}"; do crane digest --insecure "$r"; done; }
# requests BIN: what a cold pin by BIN sends, by kind, from the registry's
# access log (a registry restarted with it on, then off again; only the
# requests of go-containerregistry, not the readiness check's curl).
requests() {
	stop_registry
	start_registry false
	"$1" pin --cache '' "${REFS[@]}" >/dev/null
	stop_registry
	awk '$6 ~ /^"(GET|HEAD)$/ && /go-containerregistry/ {print substr($6, 2), $7}' "$WORK/registry.log" |
		sed -E 's#^([A-Z]+) /v2/$#\1 ping#; s#^([A-Z]+) /v2/.*/(manifests|blobs)/.*#\1 \2#' |
		sort | uniq -c | awk '{printf "%s%s %s %d", sep, $2, $3, $1; sep = ", "} END {print ""}'
	start_registry true
}

# check both agree before timing anything
diff <(lockstep pin "${REFS[@]}" | sed 's/.*@//') <(crane_loop) >/dev/null || { echo "lockstep and crane disagree" >&2; exit 1; }
requests lockstep >"$WORK/requests" # in this shell: it restarts the registry
REQ_LS=$(cat "$WORK/requests")
if [ -n "${BEFORE:-}" ]; then
	requests "$BEFORE" >"$WORK/requests"
	REQ_BEFORE=$(cat "$WORK/requests")
fi

echo "== timing ($RUNS runs each)" >&2
CACHE=$WORK/cache
lockstep pin --cache "$CACHE" "${REFS[@]}" >/dev/null # fill the cache
[ -z "${BEFORE:-}" ] || "$BEFORE" pin --cache "$WORK/cache-before" "${REFS[@]}" >/dev/null
# The variants take turns, run after run, so that they share the machine's
# (shared, changing) load.
for _ in $(seq "$RUNS"); do
	timed warm lockstep pin --cache "$CACHE" --concurrency "$CONC" "${REFS[@]}"
	sample pin-warm lockstep "$LAST" s "lockstep pin of $N tags, warm cache, concurrency $CONC"
	if [ -n "${BEFORE:-}" ]; then
		timed before-warm "$BEFORE" pin --cache "$WORK/cache-before" --concurrency "$CONC" "${REFS[@]}"
		sample pin-warm before "$LAST" s "the BEFORE binary's pin of $N tags, warm cache, concurrency $CONC"
	fi
	timed warm1 lockstep pin --cache "$CACHE" --concurrency 1 "${REFS[@]}"
	timed cold lockstep pin --cache "" --concurrency "$CONC" "${REFS[@]}"
	sample pin-cold lockstep "$LAST" s "lockstep pin of $N tags, --cache '', concurrency $CONC"
	if [ -n "${BEFORE:-}" ]; then
		timed before-cold "$BEFORE" pin --cache "" --concurrency "$CONC" "${REFS[@]}"
		sample pin-cold before "$LAST" s "the BEFORE binary's pin of $N tags, --cache '', concurrency $CONC"
	fi
	rm -rf "$WORK/empty"
	timed empty lockstep pin --cache "$WORK/empty" --concurrency "$CONC" "${REFS[@]}"
	sample pin-empty lockstep "$LAST" s "lockstep pin of $N tags into an empty cache (it writes it), concurrency $CONC"
	if [ -n "${BEFORE:-}" ]; then
		rm -rf "$WORK/empty"
		timed before-empty "$BEFORE" pin --cache "$WORK/empty" --concurrency "$CONC" "${REFS[@]}"
		sample pin-empty before "$LAST" s "the BEFORE binary's pin of $N tags into an empty cache, concurrency $CONC"
	fi
	if [ "$SHARED" -gt 0 ]; then
		timed shared lockstep pin --cache "" --concurrency "$CONC" "${SREFS[@]}"
		sample pin-shared lockstep "$LAST" s "lockstep pin of $N tags of $SHARED images, --cache '', concurrency $CONC"
		if [ -n "${BEFORE:-}" ]; then
			timed before-shared "$BEFORE" pin --cache "" --concurrency "$CONC" "${SREFS[@]}"
			sample pin-shared before "$LAST" s "the BEFORE binary's pin of $N tags of $SHARED images, --cache ''"
		fi
	fi
	timed crane crane_loop
	for b in warm cold empty $([ "$SHARED" -gt 0 ] && echo shared); do sample "pin-$b" anchor "$LAST" s "a loop of crane digest over $N tags"; done
done
# one round trip: a manifest HEAD, as a warm lockstep sends it, over a
# kept-alive connection
RTT=$(hey -n 2000 -c 1 -m HEAD -H "Accept: application/vnd.docker.distribution.manifest.v2+json" \
	"http://$HOST/v2/bench/app/manifests/t1" | awk '/Average:/ {print $2; exit}')
# what the registry serves at most, at lockstep's concurrency (this
# machine's 2 cores are shared by the registry, the client and the rest)
RPS=$(hey -n 2000 -c "$CONC" -m HEAD -H "Accept: application/vnd.docker.distribution.manifest.v2+json" \
	"http://$HOST/v2/bench/app/manifests/t1" | awk '/Requests\/sec:/ {print $2; exit}')
SERVER=$(echo "$N / $RPS" | bc -l)
# lockstep sends one round trip an image with a warm cache (a HEAD of the
# tag), two without (a GET of the manifest, then of the config blob)
FLOOR=$(echo "($N / $CONC) * $RTT" | bc -l)
FLOOR1=$(echo "$N * $RTT" | bc -l)
# the registry's own CPU per request (ms), over 1000 requests at
# lockstep's concurrency: what bounds a pin from below on this machine
CFG=$(crane manifest --insecure "$HOST/bench/app:t1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["config"]["digest"])')
ACCEPT=application/vnd.docker.distribution.manifest.v2+json
percpu() { # METHOD PATH
	local c0 c1
	c0=$(regcpu)
	hey -n 1000 -c "$CONC" -m "$1" -H "Accept: $ACCEPT" "http://$HOST/v2/bench/app/$2" >/dev/null
	c1=$(regcpu)
	echo "($c1 - $c0) * 1000 / $TICK / 1000" | bc -l
}
CPU_HEAD=$(percpu HEAD manifests/t1)
CPU_GET=$(percpu GET manifests/t1)
CPU_BLOB=$(percpu GET "blobs/$CFG")
CPU_FLOOR=$(echo "$N * ($CPU_GET + $CPU_BLOB) / 1000 / $(nproc)" | bc -l)

printf '\nmachine: %s, %s cores, load %s\n' "$(uname -m)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-48s %9s %9s %14s\n' "pinning $N tags (wall, s)" best median "registry CPU s"
row() { # LABEL VARIANT
	local best med
	read -r best med < <(stats ${T[$2]})
	printf '%-48s %9s %9s %14.3f\n' "$1" "$best" "$med" "$(median ${C[$2]})"
}
row "lockstep pin (concurrency $CONC, warm cache)" warm
[ -z "${BEFORE:-}" ] || row "BEFORE's pin (concurrency $CONC, warm cache)" before-warm
row "lockstep pin --concurrency 1 (warm cache)" warm1
row "lockstep pin --cache '' (concurrency $CONC)" cold
[ -z "${BEFORE:-}" ] || row "BEFORE's pin --cache ''" before-cold
row "lockstep pin, an empty cache (concurrency $CONC)" empty
[ -z "${BEFORE:-}" ] || row "BEFORE's pin, an empty cache" before-empty
if [ "$SHARED" -gt 0 ]; then
	row "lockstep pin --cache '', $N tags of $SHARED images" shared
	[ -z "${BEFORE:-}" ] || row "BEFORE's pin --cache '', $N tags of $SHARED images" before-shared
fi
row "loop of crane digest" crane
printf '%-48s %9.4f\n' "one round trip (manifest HEAD, hey)" "$RTT"
printf '%-48s %9.3f\n' "floor: N/$CONC round trips" "$FLOOR"
printf '%-48s %9.3f\n' "floor: N round trips (concurrency 1)" "$FLOOR1"
printf '%-48s %9.3f  (%.0f manifest HEADs/s at c=%s)\n' "floor: the registry's throughput, N/rps" "$SERVER" "$RPS" "$CONC"
printf "the registry's CPU a request (ms): manifest HEAD %.2f, manifest GET %.2f, config blob GET %.2f\n" "$CPU_HEAD" "$CPU_GET" "$CPU_BLOB"
printf '%-48s %9.3f\n' "floor: the registry's CPU for a cold pin / cores" "$CPU_FLOOR"
printf 'requests of a cold pin: %s\n' "$REQ_LS"
[ -z "${BEFORE:-}" ] || printf "requests of BEFORE's cold pin: %s\n" "$REQ_BEFORE"
CR_MED=$(median ${T[crane]})
printf 'speed-up over the crane loop (median): %.1fx warm, %.1fx without a cache, %.1fx into an empty one\n' \
	"$(echo "$CR_MED / $(median ${T[warm]})" | bc -l)" "$(echo "$CR_MED / $(median ${T[cold]})" | bc -l)" "$(echo "$CR_MED / $(median ${T[empty]})" | bc -l)"
