#!/usr/bin/env bash
# bench/parse.sh: manifest.Parse of a manifest of 10,000 assets (strict:
# duplicate keys, unknown fields, validation) against one plain
# json.Unmarshal of the same bytes (the anchor), in ROUNDS interleaved
# rounds; microseconds per asset. Row parse-digest is manifest.NewSigned,
# what every consumer does with a fetched manifest: the strict parse and
# the canonical digest, against the same anchor. Row encode is
# Manifest.Encode (validation and the canonical encoding: what record and
# publish write) against one plain json.Marshal of the same manifest.
#
#   bench/parse.sh            ROUNDS=5 BENCHTIME=1s
#   BEFORE=TESTBIN bench/parse.sh   also TESTBIN's benchmarks in
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
one() { # ROW BENCHMARK ROLE [TESTBIN]
	"${4:-$tmp/manifest.test}" -test.run '^$' -test.bench "^$2\$" -test.benchtime "$BENCHTIME" -test.benchmem |
		awk -v row="$1" -v role="$3" -v name="$2" '/^Benchmark/ {
			for (i = 1; i < NF; i++) if ($(i + 1) == "ns/op") ns = $i
			printf "# %s\n", $0
			printf "bench %s %s %.3f us %s, per asset of 10,000\n", row, role, ns / 10000 / 1000, name }'
}
for _ in $(seq "$ROUNDS"); do
	one parse BenchmarkParse10k lockstep
	one parse BenchmarkUnmarshal10k anchor
	one parse-digest BenchmarkNewSigned10k lockstep
	one parse-digest BenchmarkUnmarshal10k anchor
	one encode BenchmarkEncode10k lockstep
	one encode BenchmarkMarshal10k anchor
	if [ -n "$BEFORE" ]; then
		one parse BenchmarkParse10k before "$BEFORE"
		one parse-digest BenchmarkNewSigned10k before "$BEFORE"
		one encode BenchmarkEncode10k before "$BEFORE"
	fi
done
