#!/bin/sh
# The boot gate's benchmark: a manifest of 500 assets, 50 served by the
# probed page, on loopback nginx (CDN and app) and a fake Docker daemon;
# p50 and p99 over 100 checks, and the requests sent per check, in process
# (admission.Check) and through the lockstep binary (process start
# included). Needs nginx (scripts/install-deps.sh installs it).
#
#   bench/admit.sh            100 checks each
#   RUNS=300 bench/admit.sh
set -eu
cd "$(dirname "$0")/.."
RUNS=${RUNS:-100}
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
go test -run '^$' -bench '^BenchmarkAdmit$' -benchtime "${RUNS}x" -count 1 ./admission/ |
	awk '/^Benchmark/ { printf "%-28s p50 %8s ms   p99 %8s ms   %s requests/check\n", $1, $5, $7, $9 }'
