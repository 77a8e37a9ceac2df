#!/usr/bin/env bash
# bench/fleet.sh: `lockstep fleet check` over N simulated agents (default
# 100,000) on loopback: bench/fleetsim serves a real agent status for each
# of N instances, spread over PORTS ports of 127.0.0.1 in one process (1%
# of them on a re-pushed digest). Each run takes turns with the floor
# (`fleetsim -fetch`: the same GETs, bodies thrown away, no decoding and no
# report), so that both share the machine's load. Prints wall time and
# peak RSS of each (min and median of RUNS), the report's summary, the
# machine's load, and `bench` lines for bench/run.sh (bench/lib.sh).
# Targets (issue 16): 100,000 instances in under 20 s and 512 MiB.
#
#   bench/fleet.sh [N]           N instances (default 100000)
#   PORTS=1000                   ports the instances are spread over (at most N)
#   CONCURRENCY=64 RUNS=3        lockstep's --concurrency (the floor's too); runs
#
# Every instance has its own status URL (http://127.0.0.1:PORT/i/INDEX/v1/status)
# and the check opens one connection per instance, as against a real fleet
# (it sends Connection: close); N/PORTS instances share a port so that the
# simulator needs PORTS listening sockets, not N (the open-file limit here
# is 20,000). Listening ports start at 12000, below the ephemeral range
# (32768+), so the check's connections never compete with them; spreading
# the connections over PORTS destinations keeps the ephemeral ports free
# (each closed connection waits in TIME_WAIT per destination).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
N=${1:-100000}
PORTS=${PORTS:-1000}
CONCURRENCY=${CONCURRENCY:-64}
RUNS=${RUNS:-3}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench/fleet.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
PORTS=$((PORTS < N ? PORTS : N))

ulimit -n "$(ulimit -Hn)"
need=$((PORTS + 2 * CONCURRENCY + 256))
if [ "$(ulimit -n)" -lt "$need" ]; then
	echo "bench/fleet.sh: the open-file limit $(ulimit -n) is below $need; raise the hard limit (limits.conf) or lower PORTS" >&2
	exit 1
fi

DIR=$(mktemp -d /tmp/lockstep-bench-fleet.XXXXXX)
SIM_PID=
cleanup() { [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$DIR"; }
trap cleanup EXIT

echo "== building lockstep and fleetsim" >&2
LOCKSTEP=$(lockstep_bin "$DIR")
go build -o "$DIR/fleetsim" ./bench/fleetsim

echo "== starting $N simulated agents on $PORTS ports" >&2
mkfifo "$DIR/ready"
"$DIR/fleetsim" -n "$N" -ports "$PORTS" -dir "$DIR" >"$DIR/ready" &
SIM_PID=$!
read -r line <"$DIR/ready"
[ "$line" = ready ] || { echo "bench/fleet.sh: fleetsim did not start" >&2; exit 1; }

# timed OUT CMD...: runs CMD under time(1); prints "WALL_S RSS_KIB".
# time(1) writes "Command exited with non-zero status 1" first.
timed() {
	local out=$1; shift
	"$TIME" -f '%e %M' -o "$DIR/time" "$@" >"$out" 2>"$DIR/stderr"
}

: >"$DIR/lockstep.txt"; : >"$DIR/floor.txt"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
for run in $(seq "$RUNS"); do
	set +e
	timed /dev/null "$LOCKSTEP" fleet check --insecure-allow-unsigned \
		--manifest "$DIR/release.json" --release store-web --targets "file:$DIR/targets.txt" \
		--concurrency "$CONCURRENCY" --format json --report "$DIR/report.json"
	code=$?
	set -e
	# 1% of the fleet diverges by design: exit 1 is the expected result.
	[ "$code" = 1 ] || { echo "bench/fleet.sh: lockstep exited $code" >&2; tail -20 "$DIR/stderr" >&2; exit 1; }
	read -r wall rss < <(tail -n 1 "$DIR/time")
	echo "$wall $rss" >>"$DIR/lockstep.txt"
	echo "run $run: lockstep ${wall} s, $((rss / 1024)) MiB" >&2
	sample "fleet-$N" lockstep "$wall" s "lockstep fleet check, $N agents"
	sample "fleet-$N-rss" lockstep "$((rss / 1024))" MiB "lockstep fleet check, $N agents, peak RSS"

	timed "$DIR/floor.out" "$DIR/fleetsim" -fetch "$DIR/targets.txt" -concurrency "$CONCURRENCY" ||
		{ echo "bench/fleet.sh: the floor failed" >&2; cat "$DIR/stderr" >&2; exit 1; }
	read -r wall rss < <(tail -n 1 "$DIR/time")
	echo "$wall $rss" >>"$DIR/floor.txt"
	echo "run $run: floor ${wall} s, $((rss / 1024)) MiB" >&2
	sample "fleet-$N" anchor "$wall" s "the same GETs, bodies discarded (fleetsim -fetch)"
	sample "fleet-$N-rss" anchor "$((rss / 1024))" MiB "the same GETs, peak RSS"
done

summary=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); s=r["summary"]; print("%d instances: %d match, %d divergent, %d unreachable; %d groups; %d requests, %d retries" % (s["instances"], s["match"], s["divergent"], s["unreachable"], len(r["groups"]), r["requests"], r["retries"]))' "$DIR/report.json")
# stats FILE: min and median of the wall times and peak RSS (MiB) of FILE's lines.
stats() {
	sort -n "$1" | awk '{ w[NR] = $1 } END { m = (NR % 2) ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2; printf "%.2f s | %.2f s", w[1], m }'
	printf ' | '
	sort -n -k2 "$1" | awk '{ r[NR] = $2 / 1024 } END { m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2; printf "%.0f MiB | %.0f MiB", r[1], m }'
}
echo
echo "| $N instances on $PORTS ports, concurrency $CONCURRENCY, $RUNS runs | wall min | wall median | peak RSS min | peak RSS median |"
echo "| --- | ---: | ---: | ---: | ---: |"
echo "| \`lockstep fleet check --format json --report\` | $(stats "$DIR/lockstep.txt") |"
echo "| floor: \`fleetsim -fetch\` (the GETs alone) | $(stats "$DIR/floor.txt") |"
echo
echo "report: $summary"
echo "machine: $(nproc) cores, load average $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
