#!/usr/bin/env bash
# bench/parse.sh: manifest.Parse of a manifest of 10,000 assets (strict:
# duplicate keys, unknown fields, validation) against one plain
# json.Unmarshal of the same bytes (the anchor), in ROUNDS interleaved
# rounds; microseconds per asset.
#
#   bench/parse.sh            ROUNDS=5 BENCHTIME=1s
#   BEFORE=TESTBIN bench/parse.sh   also TESTBIN's BenchmarkParse10k in
#                             the same rounds (role before): a manifest
#                             test binary of another commit, built with
#                             go test -c ./manifest/
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${ROUNDS:-5}
BENCHTIME=${BENCHTIME:-1s}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/manifest.test" ./manifest/
BEFORE=${BEFORE:-}
one() { # BENCHMARK ROLE [TESTBIN]
	"${3:-$tmp/manifest.test}" -test.run '^$' -test.bench "^$1\$" -test.benchtime "$BENCHTIME" -test.benchmem |
		awk -v role="$2" -v name="$1" '/^Benchmark/ {
			for (i = 1; i < NF; i++) if ($(i + 1) == "ns/op") ns = $i
			printf "# %s\n", $0
			printf "bench parse %s %.3f us %s, per asset of 10,000\n", role, ns / 10000 / 1000, name }'
}
for _ in $(seq "$ROUNDS"); do
	one BenchmarkParse10k lockstep
	one BenchmarkUnmarshal10k anchor
	if [ -n "$BEFORE" ]; then one BenchmarkParse10k before "$BEFORE"; fi
done
