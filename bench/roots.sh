#!/usr/bin/env bash
# bench/roots.sh: what a Go client's first TLS handshake costs before it
# starts when no roots are configured: Go's x509.SystemCertPool (on Linux the
# first bundle file that exists, then every certificate of /etc/ssl/certs and
# the other directories), lockstep's transport.SystemRoots (the same files,
# the same certificates, each parsed once), and that bundle file alone, which
# is what curl and OpenSSL read up front (they look certificates up in the
# directory only when one is needed, by subject hash). ROUNDS interleaved
# rounds of RUNS processes each; prints each round's median, then min /
# median of the rounds and the ratios to the bundle alone. Its bench lines
# (bench/lib.sh) are rows roots (lockstep's against Go's) and roots-bundle
# (lockstep's against the bundle alone) of bench/run.sh.
#
#   bench/roots.sh            ROUNDS=5 RUNS=20
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
release_build "$tmp/roots" ./bench/roots
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores" >&2
for r in $(seq "$ROUNDS"); do
	for mode in system lockstep bundle; do
		for _ in $(seq "$RUNS"); do "$tmp/roots" "$mode"; done >"$tmp/$mode.$r"
		m=$(cut -d' ' -f1 "$tmp/$mode.$r" | median)
		echo "$m" >>"$tmp/$mode"
		echo "round $r $mode: median ${m} ms of $RUNS processes, $(head -1 "$tmp/$mode.$r" | cut -d' ' -f2) certificates" >&2
		# Row roots: lockstep's loader against Go's; row roots-bundle: the
		# same against the bundle alone (bench/run.sh's table).
		case $mode in
		system) sample roots anchor "$m" ms "x509.SystemCertPool (Go's), median of $RUNS processes" ;;
		lockstep)
			sample roots lockstep "$m" ms "transport.SystemRoots, median of $RUNS processes"
			sample roots-bundle lockstep "$m" ms "transport.SystemRoots, median of $RUNS processes"
			;;
		bundle) sample roots-bundle anchor "$m" ms "the bundle file alone, median of $RUNS processes" ;;
		esac
	done
done
python3 - "$tmp" <<'PY'
import statistics, sys
d = sys.argv[1]
v = {m: [float(x) for x in open(f"{d}/{m}")] for m in ("system", "lockstep", "bundle")}
med = {m: statistics.median(x) for m, x in v.items()}
print("| roots loaded | min / median of the rounds | ratio of medians to the bundle alone |")
print("| --- | ---: | ---: |")
print(f"| `x509.SystemCertPool` (Go's) | {min(v['system']):.2f} / {med['system']:.2f} ms | {med['system'] / med['bundle']:.2f} |")
print(f"| `transport.SystemRoots` (lockstep's: the same certificates) | {min(v['lockstep']):.2f} / {med['lockstep']:.2f} ms | {med['lockstep'] / med['bundle']:.2f} |")
print(f"| the bundle file alone (what curl reads up front) | {min(v['bundle']):.2f} / {med['bundle']:.2f} ms | |")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
