#!/usr/bin/env bash
# bench/storm.sh: 1,000 checkers through a CDN outage (BenchmarkStorm in
# verify/cdn/storm_test.go). Each instance has its own transport.Client and
# checks one asset every 500 ms against a loopback CDN that answers 503
# from 2 s to 4.5 s of a 7 s run. Every round runs, in turn, the fault-free
# run, the outage run, and the outage run with the hosts' breakers off (the
# client before them: BreakerFailures -1), so that all three share the
# machine's load. Prints, per round, the requests in the outage window and
# the busiest second after recovery against the fault-free run, and `bench`
# lines for bench/run.sh (bench/lib.sh):
#
#	storm-outage            requests in the outage window    the fault-free run's, same window
#	storm-outage-nobreaker  the same, breakers off           the fault-free run's
#	storm-recovery          busiest second after recovery    the fault-free steady rate
#
# Goals (issue 16): outage ≤ 1.25× the fault-free requests, no second in the
# recovery above 1.2× the steady rate.
#
#   bench/storm.sh            ROUNDS=5
#   QUICK=1 bench/storm.sh    one small, short storm: checks the script, measures nothing
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS=${ROUNDS:-5}
QUICK=${QUICK:-0}
[ "$QUICK" = 1 ] && ROUNDS=1

dir=$(mktemp -d /tmp/lockstep-bench-storm.XXXXXX)
trap 'rm -rf "$dir"' EXIT
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== BenchmarkStorm, $ROUNDS rounds (three storms of 7 s each)" >&2
LOCKSTEP_STORM_QUICK=$QUICK go test ./verify/cdn -run '^$' -bench '^BenchmarkStorm$' -benchtime 1x -count "$ROUNDS" >"$dir/out" 2>&1 ||
	{ echo "bench/storm.sh: the benchmark failed" >&2; tail -30 "$dir/out" >&2; exit 1; }
grep -E 'storm_test.go' "$dir/out" >&2 || true

echo "| round | outage requests (breakers) | without breakers | fault-free | ratio | ratio without | busiest second after recovery | steady | ratio | back to 90% after |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
awk '
	/^BenchmarkStorm-[0-9]* / {
		delete m
		for (i = 3; i < NF; i++) if ($(i + 1) ~ /-req|req\/s|-s$/) m[$(i + 1)] = $i
		r++
		printf "| %d | %d | %d | %d | %.2f | %.2f | %d | %.0f | %.2f | %.1f s |\n", r, m["outage-req"], m["nobreaker-req"], m["calm-req"],
			m["outage-req"] / m["calm-req"], m["nobreaker-req"] / m["calm-req"], m["recovery-req/s"], m["steady-req/s"],
			m["recovery-req/s"] / m["steady-req/s"], m["recovered-s"]
		printf "bench storm-outage lockstep %d req requests in the outage window (breakers)\n", m["outage-req"] >"/dev/stderr"
		printf "bench storm-outage anchor %d req the fault-free run, same window\n", m["calm-req"] >"/dev/stderr"
		printf "bench storm-outage-nobreaker lockstep %d req requests in the outage window (breakers off)\n", m["nobreaker-req"] >"/dev/stderr"
		printf "bench storm-outage-nobreaker anchor %d req the fault-free run, same window\n", m["calm-req"] >"/dev/stderr"
		printf "bench storm-recovery lockstep %d req/s the busiest second after recovery\n", m["recovery-req/s"] >"/dev/stderr"
		printf "bench storm-recovery anchor %.0f req/s the fault-free steady rate\n", m["steady-req/s"] >"/dev/stderr"
	}' "$dir/out" 2>"$dir/samples"
cat "$dir/samples"
echo "machine: $(nproc) cores, load average $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
