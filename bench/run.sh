#!/usr/bin/env bash
# bench/run.sh: the figures of docs/benchmarks.md in one run. Each
# benchmark runs against its anchor, interleaved (lockstep, anchor,
# lockstep, anchor ... for ROUNDS rounds, so that both share the machine's
# changing load); at the end it prints, per benchmark, min and median of
# each side and the ratio of the medians (lockstep / anchor: below 1,
# lockstep is faster), with the load average at the start and at the end.
#
#	benchmark  lockstep                              anchor
#	start      lockstep version                      crane version
#	roots      the system's roots, transport.SystemRoots  x509.SystemCertPool (Go's)
#	roots-bundle  the same                           the bundle file alone (curl's up front)
#	roots-process  lockstep cdn check over https, the machine's trust  the same, the bundle file alone
#	admit      lockstep admit (process)              admission.Check in process
#	admit-signed  the same, a keyed-signed manifest  the same, in process
#	parse      manifest.Parse, 10,000 assets         json.Unmarshal of the same bytes
#	parse-digest  manifest.NewSigned: parse + digest  json.Unmarshal of the same bytes
#	encode     Manifest.Encode, 10,000 assets        json.Marshal of the same manifest
#	provenance an embedded provenance at boot         the embedded image signature
#	cdn-N      lockstep cdn check, N HEADs on nginx  curl --parallel --parallel-max 64 -I
#	cdn-h2-N   the same over HTTP/2 (TLS)            curl --http2, the same flags
#	pin-warm   lockstep pin of 100 tags (cache)      a loop of crane digest
#	pin-cold   lockstep pin --cache ''               a loop of crane digest
#	pin-empty  lockstep pin into an empty cache      a loop of crane digest
#	pin-shared lockstep pin --cache '', 10 images   a loop of crane digest
#	hash       lockstep record, 1 GiB, 20,000 files  sha256sum (one process)
#	graph-js   the asset graph's JavaScript parser   the same package's lexer alone
#	closure    admit's closure from every page, 10,000 assets, in process  the same check, --all-assets (bench/closure.sh)
#	closure-nginx  the same, lockstep admit against nginx  admit --all-assets
#	closure-rtt30  the same through toxiproxy, +30 ms  admit --all-assets
#	closure-rtt30-curl  the same                     curl --parallel of the closure's URLs, same link
#	closure-rtt30-limit  the same                    ceil(requests / 16) round trips of the measured RTT
#	all-assets-rtt30-curl  admit --all-assets, +30 ms  curl --parallel of every URL, same link
#	closure-rtt30-bytes  CDN bytes of the closure    CDN bytes of --all-assets
#	closure-gates  CDN requests per gate, 1,000 gates at once  the closure's size (one HEAD each)
#	closure-gates-outage  the same, the CDN 503 for 1 s  the closure's size
#	closure-gates-peak  the busiest 100 ms at the CDN  the storm's mean 100 ms
#	fleet-N    lockstep fleet check, N agents        the same GETs, bodies discarded (fleetsim -fetch)
#	fleet-N-rss  its peak RSS                        the floor's peak RSS
#	webhook-p99  webhook p99, Pod review, TLS        GET /healthz p99 at the same rate
#	storm-outage  requests in a CDN outage           the fault-free run's (1,000 checkers)
#	storm-outage-nobreaker  the same, breakers off   the fault-free run's
#	storm-recovery  busiest second after recovery    the fault-free steady rate
#
# The scripts it runs (bench/start.sh, roots.sh, admit.sh, parse.sh, provenance.sh,
# closure.sh, cdn.sh, pin.sh, hash.sh, graph.sh, fleet.sh, webhook.sh, storm.sh)
# each print one `bench` line per run (bench/lib.sh); their own
# tables go to OUT/NAME.log. lockstep is built once for all of them.
#
#   bench/run.sh              ROUNDS=5 CDN_SIZES="1000 10000 100000" FLEET_SIZE=100000 OUT=a new directory
#   QUICK=1 bench/run.sh      each benchmark once on small inputs: checks that
#                             the runner works end to end, measures nothing
#
# Before each script it waits (at most SETTLE_MAX=120 seconds) for the
# one-minute load average to fall below SETTLE_LOAD (half the cores), so
# that one benchmark's servers do not load the next one's rounds (the
# webhook's after the fleet's); SETTLE=0 does not wait. The load at each
# script's start is printed above the table.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
QUICK=${QUICK:-0}
ROUNDS=${ROUNDS:-5}
CDN_SIZES=${CDN_SIZES:-1000 10000 100000}
PIN_TAGS=100 ADMIT_RUNS=100 STARTS=20 BENCHTIME=1s
HASH_FILES=20000 HASH_BYTES=1073741824 HASH_DIR=/tmp/lockstep-bench-hash
FLEET_SIZE=${FLEET_SIZE:-100000} FLEET_PORTS=1000 WEBHOOK_DURATION=10s
OUT=${OUT:-$(mktemp -d /tmp/lockstep-bench-run.XXXXXX)}
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$QUICK" = 1 ]; then
	ROUNDS=1 CDN_SIZES=200 PIN_TAGS=3 ADMIT_RUNS=2 STARTS=2 BENCHTIME=2x
	HASH_FILES=50 HASH_BYTES=1048576 HASH_DIR=$tmp/tree
	FLEET_SIZE=2000 FLEET_PORTS=100
fi
load() { cut -d' ' -f1-3 /proc/loadavg; }
SETTLE=${SETTLE:-$([ "$QUICK" = 1 ] && echo 0 || echo 1)} # QUICK does not wait unless SETTLE=1
SETTLE_LOAD=${SETTLE_LOAD:-$(awk -v n="$(nproc)" 'BEGIN { print n / 2 }')}
SETTLE_MAX=${SETTLE_MAX:-120}
settle() { # NAME: waits for the load to settle, notes it in OUT/loads
	local waited=0
	if [ "$SETTLE" != 0 ]; then
		while [ "$waited" -lt "$SETTLE_MAX" ] && awk -v l="$(cut -d' ' -f1 /proc/loadavg)" -v max="$SETTLE_LOAD" 'BEGIN { exit !(l >= max) }'; do
			sleep 5
			waited=$((waited + 5))
		done
	fi
	echo "# $1: load average $(load) at its start (waited ${waited} s)" >>"$OUT/loads"
}
load_start=$(load) started=$(date -u +%Y-%m-%dT%H:%M:%SZ)

echo "== building lockstep" >&2
mkdir -p "$tmp/bin"
build_lockstep "$tmp/bin/lockstep"
export LOCKSTEP_BIN=$tmp/bin/lockstep

: >"$OUT/samples"
: >"$OUT/loads"
run() { # LOG SCRIPT ARGS...: runs a bench script, keeps its bench lines
	local log=$1; shift
	settle "$log"
	echo "== $*" >&2
	if ! "$@" >"$OUT/$log.log" 2>"$OUT/$log.err"; then
		echo "bench/run.sh: $* failed:" >&2
		tail -20 "$OUT/$log.err" >&2
		exit 1
	fi
	grep '^bench ' "$OUT/$log.log" >>"$OUT/samples" || { echo "bench/run.sh: $* printed no bench line" >&2; exit 1; }
}
ROUNDS=$ROUNDS STARTS=$STARTS run start bench/start.sh
ROUNDS=$ROUNDS RUNS=$STARTS run roots bench/roots.sh
ROUNDS=$ROUNDS RUNS=$ADMIT_RUNS run admit bench/admit.sh
if [ "$QUICK" = 1 ]; then CLOSURE_RUNS=2 CLOSURE_ASSETS=500 CLOSURE_GATES=200; else CLOSURE_RUNS=20 CLOSURE_ASSETS=10000 CLOSURE_GATES=1000; fi
QUICK=$QUICK ROUNDS=$ROUNDS RUNS=$CLOSURE_RUNS ASSETS=$CLOSURE_ASSETS GATES=$CLOSURE_GATES run closure bench/closure.sh
ROUNDS=$ROUNDS BENCHTIME=$BENCHTIME run parse bench/parse.sh
ROUNDS=$ROUNDS BENCHTIME=$BENCHTIME run provenance bench/provenance.sh
for n in $CDN_SIZES; do RUNS=$ROUNDS QUICK=$QUICK H1TLS=0 run "cdn-$n" bench/cdn.sh "$n"; done
run pin bench/pin.sh "$PIN_TAGS" "$ROUNDS"
RUNS=$ROUNDS FILES=$HASH_FILES BYTES=$HASH_BYTES run hash bench/hash.sh "$HASH_DIR"
ROUNDS=$ROUNDS BENCHTIME=$BENCHTIME run graph bench/graph.sh
RUNS=$ROUNDS PORTS=$FLEET_PORTS run fleet bench/fleet.sh "$FLEET_SIZE"
ROUNDS=$ROUNDS QUICK=$QUICK run webhook bench/webhook.sh
ROUNDS=$ROUNDS QUICK=$QUICK run storm bench/storm.sh

# Where perf is installed, bench/perf.sh profiles version, admit and record
# (OUT/profile-NAME.log: the profile table of docs/benchmarks.md); a
# profile that fails is reported, not fatal.
profiles=
if command -v perf >/dev/null; then
	profile_runs=40
	[ "$QUICK" = 1 ] && profile_runs=2
	for w in version admit record; do
		echo "== bench/perf.sh $w" >&2
		if RUNS=$profile_runs FILES=$((HASH_FILES / 10)) BYTES=$((HASH_BYTES / 16)) bench/perf.sh "$w" >"$OUT/profile-$w.log" 2>&1; then
			profiles="$profiles $OUT/profile-$w.log"
		else
			echo "bench/run.sh: bench/perf.sh $w failed (not fatal):" >&2
			tail -5 "$OUT/profile-$w.log" >&2
		fi
	done
fi
echo "# bench/run.sh, $started to $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(uname -m), $ROUNDS rounds$([ "$QUICK" = 1 ] && echo ', QUICK=1: not a measurement')"
echo "# load average at the start: $load_start; at the end: $(load)"
cat "$OUT/loads"
echo "# logs: $OUT"
[ -z "$profiles" ] || echo "# profiles:$profiles"
awk '
	function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	$1 == "bench" {
		name = $2; role = $3
		if (!(name in seen)) { seen[name] = 1; order[++names] = name }
		k = name SUBSEP role
		v[k, ++n[k]] = $4 + 0; unit[k] = $5
		label = $6; for (i = 7; i <= NF; i++) label = label " " $i
		what[k] = label
	}
	END {
		printf "| benchmark | lockstep | min | median | anchor | min | median | ratio of medians |\n"
		printf "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: |\n"
		for (i = 1; i <= names; i++) {
			name = order[i]; l = name SUBSEP "lockstep"; a = name SUBSEP "anchor"
			for (r = 1; r <= 2; r++) {
				k = (r == 1) ? l : a
				delete s; m = n[k]; lo = ""
				for (j = 1; j <= m; j++) { s[j] = v[k, j]; if (lo == "" || s[j] < lo) lo = s[j] }
				mn[r] = lo; md[r] = m ? median(s, m) : 0
			}
			printf "| %s | %s | %g %s | %g %s | %s | %g %s | %g %s | %s |\n", name, what[l], mn[1], unit[l], md[1], unit[l],
				what[a], mn[2], unit[a], md[2], unit[a], (md[2] > 0 ? sprintf("%.2f", md[1] / md[2]) : "n/a")
		}
	}' "$OUT/samples"
