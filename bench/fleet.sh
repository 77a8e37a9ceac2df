#!/usr/bin/env bash
# bench/fleet.sh: `lockstep fleet check` over N simulated agents (default
# 10,000) on loopback: bench/fleetsim serves a real agent status on each of
# N ports of 127.0.0.1 in one process (1% of them on a re-pushed digest).
# Prints wall time and peak RSS of the check (best of RUNS), the report's
# summary and the machine's load. Targets: under 10 s and 256 MiB on 2 cores.
#
#   bench/fleet.sh [N]        N instances (default 10000)
#   CONCURRENCY=64 RUNS=3     lockstep's --concurrency; runs
#
# Every instance is its own port (and so its own connection, as in a real
# fleet): the simulator needs N listening sockets and the check up to
# --concurrency connections, so the script raises the open-file limit to
# the hard limit. Listening ports start at 12000, below the ephemeral range
# (32768+), so the check's connections never compete with them; the listen
# backlog (net.core.somaxconn) is far above --concurrency.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
CONCURRENCY=${CONCURRENCY:-64}
RUNS=${RUNS:-3}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench/fleet.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

ulimit -n "$(ulimit -Hn)"
need=$((N + CONCURRENCY + 256))
if [ "$(ulimit -n)" -lt "$need" ]; then
	echo "bench/fleet.sh: the open-file limit $(ulimit -n) is below $need; raise the hard limit (limits.conf) or lower N" >&2
	exit 1
fi

DIR=$(mktemp -d /tmp/lockstep-bench-fleet.XXXXXX)
SIM_PID=
cleanup() { [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$DIR"; }
trap cleanup EXIT

echo "== building lockstep and fleetsim" >&2
go build -o "$DIR/lockstep" ./cmd/lockstep
go build -o "$DIR/fleetsim" ./bench/fleetsim

echo "== starting $N simulated agents" >&2
mkfifo "$DIR/ready"
"$DIR/fleetsim" -n "$N" -dir "$DIR" >"$DIR/ready" &
SIM_PID=$!
read -r line <"$DIR/ready"
[ "$line" = ready ] || { echo "bench/fleet.sh: fleetsim did not start" >&2; exit 1; }

best_wall= best_rss=
for run in $(seq "$RUNS"); do
	set +e
	"$TIME" -f '%e %M' -o "$DIR/time" "$DIR/lockstep" fleet check --insecure-allow-unsigned \
		--manifest "$DIR/release.json" --targets "file:$DIR/targets.txt" \
		--concurrency "$CONCURRENCY" --format json --report "$DIR/report.json" >/dev/null 2>"$DIR/stderr"
	code=$?
	set -e
	# 1% of the fleet diverges by design: exit 1 is the expected result.
	[ "$code" = 1 ] || { echo "bench/fleet.sh: lockstep exited $code" >&2; cat "$DIR/stderr" >&2; exit 1; }
	# time(1) writes "Command exited with non-zero status 1" first.
	read -r wall rss < <(tail -n 1 "$DIR/time")
	echo "run $run: ${wall} s, $((rss / 1024)) MiB" >&2
	if [ -z "$best_wall" ] || awk "BEGIN{exit !($wall < $best_wall)}"; then best_wall=$wall best_rss=$rss; fi
done

summary=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); s=r["summary"]; print("%d instances: %d match, %d divergent, %d unreachable; %d requests, %d retries" % (s["instances"], s["match"], s["divergent"], s["unreachable"], r["requests"], r["retries"]))' "$DIR/report.json")
echo
echo "| instances | concurrency | wall time (best of $RUNS) | peak RSS | report |"
echo "| ---: | ---: | ---: | ---: | --- |"
echo "| $N | $CONCURRENCY | ${best_wall} s | $((best_rss / 1024)) MiB | $summary |"
echo
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
