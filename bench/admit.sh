#!/bin/sh
# The boot gate's benchmark: a manifest of 500 assets, 50 served by the
# probed page, on loopback nginx (CDN and app) and a fake Docker daemon;
# p50 and p99 over RUNS checks, and the requests sent per check, through
# the lockstep binary (process start included) against the same check in
# process (admission.Check, the anchor), in ROUNDS interleaved rounds.
# Each round also runs the same check of the manifest signed with a key
# (row admit-signed: --key, the signature verified, as a real gate does;
# the unsigned row passes --insecure-allow-unsigned); SIGNED=0 skips it.
# Needs nginx (scripts/install-deps.sh installs it). BEFORE=BIN also runs
# BIN's admit each round (role `before`): a change's before/after in the
# same interleaved run.
#
#   bench/admit.sh            ROUNDS=5 RUNS=100 BEFORE= SIGNED=1
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
RUNS=${RUNS:-100}
ROUNDS=${ROUNDS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
LOCKSTEP_BIN=$(lockstep_bin "$tmp")
export LOCKSTEP_BIN
go test -c -o "$tmp/admission.test" ./admission/
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
# one NAME VARIANT ROLE [BIN]: one round of RUNS checks; the p50 as a sample
# line of row NAME, the whole figure as a comment.
one() {
	LOCKSTEP_BIN=${4:-$LOCKSTEP_BIN} "$tmp/admission.test" -test.run '^$' -test.bench "^BenchmarkAdmit\$/^$2\$" -test.benchtime "${RUNS}x" -test.count 1 |
		awk -v name="$1" -v role="$3" -v runs="$RUNS" '/^Benchmark/ {
			printf "# %-35s p50 %8s ms   p99 %8s ms   %s requests/check\n", $1, $5, $7, $9
			printf "bench %s %s %s ms %s, p50 of %d checks\n", name, role, $5, $1, runs }'
}
# row NAME SUFFIX: one round of the row's variants.
row() {
	one "$1" "cli$2" lockstep
	[ -z "${BEFORE:-}" ] || one "$1" "cli$2" before "$BEFORE"
	one "$1" "in-process$2" anchor
}
for _ in $(seq "$ROUNDS"); do
	row admit ""
	[ "${SIGNED:-1}" = 0 ] || row admit-signed -signed
done
