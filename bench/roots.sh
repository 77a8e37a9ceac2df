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
# Then a whole process whose first request is https, with the machine's
# trust (row roots-process): `lockstep cdn check` of one asset on a
# loopback `openssl s_server` whose self-signed certificate fails to verify
# once the roots are loaded (exit 1), the mean of RUNS processes a round,
# against the same process trusting the bundle file alone (SSL_CERT_DIR an
# empty directory). BEFORE=BIN also runs BIN's (role before): a change's
# before and after in the same interleaved rounds.
#
#   bench/roots.sh            ROUNDS=5 RUNS=20 BEFORE=
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-20}
BEFORE=${BEFORE:-}
command -v openssl >/dev/null || { echo "bench/roots.sh: openssl is not installed" >&2; exit 1; }
tmp=$(mktemp -d)
SERVER=
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null; rm -rf "$tmp"' EXIT
release_build "$tmp/roots" ./bench/roots
mkdir -p "$tmp/bin"
LOCKSTEP=$(lockstep_bin "$tmp/bin")
go build -o "$tmp/cdntree" ./bench/cdntree
PORT=$(free_port)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=127.0.0.1" \
	-addext "subjectAltName=IP:127.0.0.1" -keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null
openssl s_server -quiet -www -accept "127.0.0.1:$PORT" -cert "$tmp/cert.pem" -key "$tmp/key.pem" >/dev/null 2>&1 &
SERVER=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
"$tmp/cdntree" -n 1 "$tmp/tree" "https://127.0.0.1:$PORT"
mkdir -p "$tmp/empty"
# process BIN [ENV...]: the mean wall time, in ms, of RUNS `cdn check`s,
# with the machine's trust (SSL_CERT_FILE and SSL_CERT_DIR unset) and ENV.
process() {
	local bin=$1 t0
	shift
	(
		unset SSL_CERT_FILE SSL_CERT_DIR
		for kv in "$@"; do export "${kv?}"; done
		code=0
		"$bin" --log-level error cdn check --manifest "$tmp/tree/manifest-0.json" --format json >/dev/null 2>&1 || code=$?
		# Exit 1 (tls-error): the roots were loaded and the chain refused.
		[ "$code" = 1 ] || { echo "bench/roots.sh: $bin cdn check exited $code, want 1 (a tls-error)" >&2; exit 1; }
		t0=$(now_ns)
		for _ in $(seq "$RUNS"); do "$bin" --log-level error cdn check --manifest "$tmp/tree/manifest-0.json" --format json >/dev/null 2>&1 || true; done
		echo "scale=3; ($(now_ns) - $t0) / 1000000 / $RUNS" | bc
	)
}
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
for r in $(seq "$ROUNDS"); do
	m=$(process "$LOCKSTEP")
	echo "$m" >>"$tmp/process"
	sample roots-process lockstep "$m" ms "lockstep cdn check over https, the machine's trust, mean of $RUNS processes"
	if [ -n "$BEFORE" ]; then
		m=$(process "$BEFORE")
		echo "$m" >>"$tmp/process-before"
		sample roots-process before "$m" ms "BEFORE's cdn check over https, the machine's trust, mean of $RUNS processes"
	fi
	m=$(process "$LOCKSTEP" "SSL_CERT_DIR=$tmp/empty")
	echo "$m" >>"$tmp/process-bundle"
	sample roots-process anchor "$m" ms "lockstep cdn check over https, the bundle file alone, mean of $RUNS processes"
	echo "round $r: a whole https process $(tail -1 "$tmp/process") ms, trusting the bundle alone $m ms" >&2
done
python3 - "$tmp" <<'PY'
import os, statistics, sys
d = sys.argv[1]
v = {m: [float(x) for x in open(f"{d}/{m}")] for m in ("system", "lockstep", "bundle")}
med = {m: statistics.median(x) for m, x in v.items()}
print("| roots loaded | min / median of the rounds | ratio of medians to the bundle alone |")
print("| --- | ---: | ---: |")
print(f"| `x509.SystemCertPool` (Go's) | {min(v['system']):.2f} / {med['system']:.2f} ms | {med['system'] / med['bundle']:.2f} |")
print(f"| `transport.SystemRoots` (lockstep's: the same certificates) | {min(v['lockstep']):.2f} / {med['lockstep']:.2f} ms | {med['lockstep'] / med['bundle']:.2f} |")
print(f"| the bundle file alone (what curl reads up front) | {min(v['bundle']):.2f} / {med['bundle']:.2f} ms | |")
print()
p = {m: [float(x) for x in open(f"{d}/{m}")] for m in ("process", "process-before", "process-bundle") if os.path.exists(f"{d}/{m}")}
print("| a whole `lockstep cdn check` over https (mean of a round's processes) | min / median of the rounds | ratio of medians to the bundle alone |")
print("| --- | ---: | ---: |")
for m, label in (("process", "the machine's trust"), ("process-before", "`BEFORE`'s, the machine's trust"), ("process-bundle", "the bundle file alone")):
    if m in p:
        print(f"| {label} | {min(p[m]):.1f} / {statistics.median(p[m]):.1f} ms | {statistics.median(p[m]) / statistics.median(p['process-bundle']):.2f} |")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
