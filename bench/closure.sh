#!/bin/sh
# The boot gate's closure check (issue 19): admit's default, the closure of
# what the probed page references by the manifest's asset graph, against
# --all-assets (the anchor), on a build of ASSETS assets (a tenth of them
# in the closure), with a loopback CDN that counts its bytes; p50 and p99
# over RUNS checks, the requests and the CDN bytes per check, in ROUNDS
# interleaved rounds (admission.BenchmarkClosure, in process).
#
#   bench/closure.sh          ROUNDS=5 RUNS=20 ASSETS=10000
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNS=${RUNS:-20}
ROUNDS=${ROUNDS:-5}
ASSETS=${ASSETS:-10000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/admission.test" ./admission/
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $ASSETS assets"
# one VARIANT ROLE LABEL: one round of RUNS checks; the p50 as a sample
# line, the whole figure as a comment.
one() {
	LOCKSTEP_BENCH_ASSETS=$ASSETS "$tmp/admission.test" -test.run '^$' -test.bench "^BenchmarkClosure\$/^$1\$" -test.benchtime "${RUNS}x" -test.count 1 |
		awk -v role="$2" -v label="$3" -v runs="$RUNS" -v assets="$ASSETS" '/^Benchmark/ {
			for (i = 3; i < NF; i += 2) m[$(i + 1)] = $i
			printf "# %-30s p50 %8s ms   p99 %8s ms   %s requests/check   %s CDN bytes/check\n", $1, m["p50-ms"], m["p99-ms"], m["requests/check"], m["cdn-bytes/check"]
			printf "bench closure %s %s ms %s, %d assets: %s requests, %s CDN bytes, p50 of %d checks\n", role, m["p50-ms"], label, assets, m["requests/check"], m["cdn-bytes/check"], runs }'
}
for _ in $(seq "$ROUNDS"); do
	one closure lockstep "admit (the closure)"
	one all-assets anchor "admit --all-assets"
done
