#!/usr/bin/env bash
# bench/perf.sh: where a lockstep process spends its CPU, from exec to
# exit, package initialisation included (a Go CPU profile started in main
# cannot see it): perf record of RUNS runs of one command, then the
# functions with the largest inclusive share of that process's samples,
# and the shares of package initialisation, the GC's workers and the
# kernel (exec, page faults, system calls). Needs perf.
#
#	version  lockstep version
#	admit    lockstep admit, bench/admit.sh's check (BenchmarkAdmit/cli: 500
#	         assets, 50 served, loopback nginx, a fake Docker daemon)
#	record   lockstep record of a generated tree (FILES files, BYTES bytes),
#	         no images
#
#   bench/perf.sh version|admit|record    RUNS=40 TOP=30 FILES=2000 BYTES=67108864
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
what=${1:-}
RUNS=${RUNS:-40}
TOP=${TOP:-30}
FILES=${FILES:-2000}
BYTES=${BYTES:-67108864}
command -v perf >/dev/null || { echo "bench/perf.sh: perf is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The release's build but with its symbol table, which perf reads (the
# release strips it: -s -w), whatever LOCKSTEP_BIN says.
bin=$tmp/lockstep
release_build "$bin" ./cmd/lockstep ""
data=$tmp/perf.data
rec() { perf record -q -F 10000 -g -o "$data" -- "$@" >/dev/null 2>"$tmp/perf.err" || { cat "$tmp/perf.err" >&2; exit 1; }; }
case $what in
version)
	rec sh -c 'for _ in $(seq "$1"); do "$2" version >/dev/null; done' sh "$RUNS" "$bin"
	;;
admit)
	go test -c -o "$tmp/admission.test" ./admission/
	LOCKSTEP_BIN=$bin rec "$tmp/admission.test" -test.run '^$' -test.bench '^BenchmarkAdmit$/^cli$' -test.benchtime "${RUNS}x"
	;;
record)
	go run ./bench/gentree -files "$FILES" -bytes "$BYTES" "$tmp/tree"
	cat "$tmp"/tree/* >/dev/null 2>&1 || true
	rec sh -c 'for _ in $(seq "$1"); do "$2" --log-level warn record --release bench --generation 1 --assets "$3" --cdn https://cdn.example/ --output "$4" >/dev/null; done' \
		sh "$RUNS" "$bin" "$tmp/tree" "$tmp/m.json"
	;;
*)
	echo "usage: bench/perf.sh version|admit|record" >&2
	exit 2
	;;
esac
comm=$(basename "$bin")
echo "# bench/perf.sh $what: $RUNS runs, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# share of all the lockstep process's CPU samples (user and kernel), inclusive: a function and what it calls"
report() { perf report -i "$data" --comm "$comm" --percentage relative --children -g none --sort sym --percent-limit 0.5 2>/dev/null | grep -v '^#' | grep -v '^$'; }
report >"$tmp/report"
share() { awk -v s="$1" '$NF == s { print $1; exit }' "$tmp/report"; }
echo "#   package initialisation (runtime.doInit1)  $(share runtime.doInit1)"
echo "#   main.main                                 $(share main.main)"
echo "#   the GC's workers (runtime.gcBgMarkWorker) $(share runtime.gcBgMarkWorker)"
kernel=$(perf report -i "$data" --no-children -g none --sort comm,dso 2>/dev/null |
	awk -v c="$comm" '$2 == c { all += $1; if ($3 ~ /kernel/) k += $1 } END { if (all) printf "%.2f%%", 100 * k / all }')
echo "#   the kernel (of all the process's samples) $kernel"
# The top functions, without the runtime's frames that hold everything.
grep '\[\.\]' "$tmp/report" | grep -v -E 'runtime\.(goexit|main|systemstack|mcall|mstart|rt0_go)|main\.main|doInit' | sed -n "1,${TOP}p"
