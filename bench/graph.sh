#!/usr/bin/env bash
# bench/graph.sh: reading JavaScript for the asset graph (record): the
# tdewolff/parse/v2/js parser, which graph.Build uses, against the same
# package's lexer alone (the anchor: faster, but it must guess where a
# regular expression starts), on a 2.8 MB bundle (the Vite fixture's legacy
# bundle twenty times over), in ROUNDS interleaved rounds; milliseconds per
# bundle. BenchmarkJSStrings in manifest/assets/graph.
#
#   bench/graph.sh            ROUNDS=5 BENCHTIME=1s
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
go test -run '^$' -bench '^$' ./manifest/assets/graph/ >/dev/null # build once; the runs below reuse the cache
one() { # READER ROLE
	go test -run '^$' -bench "^BenchmarkJSStrings\$/^$1\$/^large" -benchtime "${BENCHTIME:-1s}" ./manifest/assets/graph/ |
		awk -v role="$2" -v name="$1" '/^Benchmark/ {
			for (i = 1; i < NF; i++) if ($(i + 1) == "ns/op") ns = $i
			printf "# %s\n", $0
			printf "bench graph-js %s %.3f ms the JavaScript %s, per 2.8 MB bundle\n", role, ns / 1000000, name }'
}
for _ in $(seq "${ROUNDS:-5}"); do
	one parser lockstep
	one lexer anchor
done
