#!/usr/bin/env bash
# Benchmarks `lockstep pin` of N tags (default 100) on a local Debian
# docker-registry (loopback only) against a loop of `crane digest` and
# against the floor of N/concurrency round trips.
#
#   bench/pin.sh [N] [RUNS]
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
	go build -o "$BIN/lockstep" ./cmd/lockstep
fi

REG=$(command -v docker-registry || echo /usr/bin/docker-registry)
[ -x "$REG" ] || { echo "docker-registry is not installed (scripts/install-deps.sh)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/lockstep-bench-pin.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
HOST=127.0.0.1:$PORT
cat >"$WORK/config.yml" <<CONF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $WORK/data
http:
  addr: $HOST
CONF
"$REG" serve "$WORK/config.yml" >"$WORK/registry.log" 2>&1 &
REGPID=$!
trap 'kill $REGPID 2>/dev/null; wait $REGPID 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do
	curl -fsS "http://$HOST/v2/" >/dev/null 2>&1 && break
	sleep 0.1
done

echo "== pushing $N tags to $HOST" >&2
mkdir -p "$WORK/layer" && echo hello >"$WORK/layer/hello.txt"
tar -C "$WORK/layer" -cf "$WORK/layer.tar" .
crane append --insecure -f "$WORK/layer.tar" -t "$HOST/bench/app:base" >/dev/null 2>&1
REFS=()
for i in $(seq 1 "$N"); do
	crane mutate --insecure --label "n=$i" -t "$HOST/bench/app:t$i" "$HOST/bench/app:base" >/dev/null 2>&1
	REFS+=("$HOST/bench/app:t$i")
done

# wall time of one run of a command, in seconds
wall() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}
# best and median of a list of times
stats() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.3f %.3f\n", a[1], a[int((NR+1)/2)]}'; }
crane_loop() { for r in "${REFS[@]}"; do crane digest --insecure "$r"; done; }

# check both agree before timing anything
diff <(lockstep pin "${REFS[@]}" | sed 's/.*@//') <(crane_loop) >/dev/null || { echo "lockstep and crane disagree" >&2; exit 1; }

echo "== timing ($RUNS runs each)" >&2
CACHE=$WORK/cache
lockstep pin --cache "$CACHE" "${REFS[@]}" >/dev/null # fill the cache
# The variants take turns, run after run, so that they share the machine's
# (shared, changing) load.
T_LS=() T_LS1=() T_LSC=() T_LSE=() T_CR=()
for _ in $(seq "$RUNS"); do
	T_LS+=("$(wall lockstep pin --cache "$CACHE" --concurrency "$CONC" "${REFS[@]}")")
	T_LS1+=("$(wall lockstep pin --cache "$CACHE" --concurrency 1 "${REFS[@]}")")
	T_LSC+=("$(wall lockstep pin --cache "" --concurrency "$CONC" "${REFS[@]}")")
	rm -rf "$WORK/empty"
	T_LSE+=("$(wall lockstep pin --cache "$WORK/empty" --concurrency "$CONC" "${REFS[@]}")")
	T_CR+=("$(wall crane_loop)")
	sample pin-warm lockstep "${T_LS[-1]}" s "lockstep pin of $N tags, warm cache, concurrency $CONC"
	sample pin-warm anchor "${T_CR[-1]}" s "a loop of crane digest over $N tags"
	sample pin-cold lockstep "${T_LSC[-1]}" s "lockstep pin of $N tags, --cache '', concurrency $CONC"
	sample pin-cold anchor "${T_CR[-1]}" s "a loop of crane digest over $N tags"
	sample pin-empty lockstep "${T_LSE[-1]}" s "lockstep pin of $N tags into an empty cache (it writes it), concurrency $CONC"
	sample pin-empty anchor "${T_CR[-1]}" s "a loop of crane digest over $N tags"
done
read -r LS_BEST LS_MED < <(stats "${T_LS[@]}")
read -r LS1_BEST LS1_MED < <(stats "${T_LS1[@]}")
read -r LSC_BEST LSC_MED < <(stats "${T_LSC[@]}")
read -r LSE_BEST LSE_MED < <(stats "${T_LSE[@]}")
read -r CR_BEST CR_MED < <(stats "${T_CR[@]}")
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

printf '\nmachine: %s, %s cores, load %s\n' "$(uname -m)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-44s %9s %9s\n' "pinning $N tags (wall, s)" best median
printf '%-44s %9s %9s\n' "lockstep pin (concurrency $CONC, warm cache)" "$LS_BEST" "$LS_MED"
printf '%-44s %9s %9s\n' "lockstep pin --concurrency 1 (warm cache)" "$LS1_BEST" "$LS1_MED"
printf '%-44s %9s %9s\n' "lockstep pin --cache '' (concurrency $CONC)" "$LSC_BEST" "$LSC_MED"
printf '%-44s %9s %9s\n' "lockstep pin, an empty cache (concurrency $CONC)" "$LSE_BEST" "$LSE_MED"
printf '%-44s %9s %9s\n' "loop of crane digest" "$CR_BEST" "$CR_MED"
printf '%-44s %9.4f\n' "one round trip (manifest HEAD, hey)" "$RTT"
printf '%-44s %9.3f\n' "floor: N/$CONC round trips" "$FLOOR"
printf '%-44s %9.3f\n' "floor: N round trips (concurrency 1)" "$FLOOR1"
printf '%-44s %9.3f  (%.0f manifest HEADs/s at c=%s)\n' "floor: the registry's throughput, N/rps" "$SERVER" "$RPS" "$CONC"
printf 'speed-up over the crane loop (median): %.1fx warm, %.1fx without a cache, %.1fx into an empty one\n' \
	"$(echo "$CR_MED / $LS_MED" | bc -l)" "$(echo "$CR_MED / $LSC_MED" | bc -l)" "$(echo "$CR_MED / $LSE_MED" | bc -l)"
