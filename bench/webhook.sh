#!/usr/bin/env bash
# Benchmarks `lockstep webhook` over TLS on loopback: hey sends
# AdmissionReviews (the fixtures in admission/webhook/testdata) at a fixed
# rate, with a warm manifest cache, and this prints p50/p90/p99 latency and
# the achieved rate per scenario, with GET /healthz as a baseline (TLS and
# HTTP alone, no review). Beside hey's latency (the client's) it prints the
# webhook's own: p50 and p99 of lockstep_webhook_request_duration_seconds
# over the scenario (from /metrics, interpolated within the histogram's
# buckets as Prometheus' histogram_quantile does; the handler alone, from
# reading the body to writing the answer, so neither TLS nor the wait for a
# core), and the CPU time per request of the webhook and of hey, which
# share the machine's cores: when hey's CPU is of the webhook's order, the
# load generator is part of what is measured. Then it runs the Go
# benchmark of the handler alone. Prints `bench` lines for bench/run.sh
# (bench/lib.sh): webhook-p99, the Pod-allowed scenario's p99 against the
# /healthz baseline's, ROUNDS times in turn.
#
#   bench/webhook.sh [RATE [DURATION [CONNECTIONS]]]   (default 3000 10s 20)
#   ROUNDS=1                  rounds of the webhook-p99 pair after the scenarios
#   BEFORE=BIN                also serves the same on a second port from BIN
#                             and measures it in each round (role `before`),
#                             between lockstep's and the baseline's: a
#                             change's before and after in one interleaved run
#   QUICK=1                   200 req/s for 1 s, one round, no Go benchmark:
#                             checks the script, measures nothing
#
# Needs go, openssl, hey, curl. Listens on 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

source bench/lib.sh
QUICK=${QUICK:-0}
ROUNDS=${ROUNDS:-1}
rate=${1:-3000} duration=${2:-10s} conns=${3:-20}
if [ "$QUICK" = 1 ]; then rate=200 duration=1s ROUNDS=1; fi
qps=$(( rate / conns ))   # hey's -q is per connection
fixtures=admission/webhook/testdata

for tool in go openssl hey curl; do
	command -v "$tool" >/dev/null || { echo "bench/webhook.sh: $tool is not installed" >&2; exit 2; }
done

dir=$(mktemp -d /tmp/lockstep-bench-webhook.XXXXXX)
pid= before_pid= served_pid=
cleanup() {
	for p in $pid $before_pid $served_pid; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	rm -rf "$dir"
}
trap cleanup EXIT

echo "== building lockstep" >&2
LOCKSTEP=$(lockstep_bin "$dir")

echo "== a CA and a serving certificate for 127.0.0.1" >&2
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=lockstep bench CA" \
	-keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=lockstep-webhook.lockstep.svc" \
	-keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:lockstep-webhook.lockstep.svc\nextendedKeyUsage=serverAuth\n' >"$dir/ext.cnf"
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 1 \
	-extfile "$dir/ext.cnf" -out "$dir/tls.crt" 2>/dev/null

# serve BIN NAME: starts BIN's webhook on a free port, waits until it is
# ready and warms it up (connections, the manifest index, the Go runtime);
# sets served_pid and served_url. Its log is $dir/NAME.log.
serve() {
	local bin=$1 name=$2 port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	served_url=https://127.0.0.1:$port
	echo "== $bin webhook on $served_url ($name)" >&2
	"$bin" --log-level warn webhook --listen "127.0.0.1:$port" --tls-cert "$dir/tls.crt" --tls-key "$dir/tls.key" \
		--manifest "$fixtures/manifest.json" --release store-web --insecure-allow-unsigned --refresh 30s 2>"$dir/$name.log" &
	served_pid=$!
	for _ in $(seq 100); do
		curl -fsS --cacert "$dir/ca.crt" "$served_url/readyz" >/dev/null 2>&1 && break
		sleep 0.1
	done
	curl -fsS --cacert "$dir/ca.crt" "$served_url/readyz" >&2 || { echo "bench/webhook.sh: the $name webhook did not start:" >&2; cat "$dir/$name.log" >&2; exit 1; }
	hey -n $((QUICK == 1 ? 200 : 2000)) -c "$conns" -m POST -T application/json -D "$fixtures/requests/pod-allowed.json" "$served_url/validate" >/dev/null
}
serve "$LOCKSTEP" webhook
pid=$served_pid url=$served_url
if [ -n "${BEFORE:-}" ]; then
	serve "$BEFORE" before
	before_pid=$served_pid before_url=$served_url
fi

# cpu_ticks: the webhook process's user+system CPU time, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
# server_time: the handler's total seconds and count, from /metrics.
server_time() {
	curl -fsS --cacert "$dir/ca.crt" "$url/metrics" |
		awk '/^lockstep_webhook_request_duration_seconds_sum/ { s = $2 } /^lockstep_webhook_request_duration_seconds_count/ { n = $2 } END { print s, n }'
}
# buckets: the handler's latency histogram, "le:count" pairs, from /metrics.
buckets() {
	curl -fsS --cacert "$dir/ca.crt" "$url/metrics" |
		awk -F'[{}" ]+' '/^lockstep_webhook_request_duration_seconds_bucket/ { printf "%s:%s ", $3, $4 } END { print "" }'
}
hz=$(getconf CLK_TCK)

# run NAME FIXTURE [hey flags]: one measured scenario. Besides hey's
# client-side latency, it reports the webhook's CPU time per request (what
# the machine's load does not change much) and the mean time in the handler.
run() {
	local name=$1 fixture=$2; shift 2
	local t0 s0 n0 b0 out
	out="$dir/$(printf '%s' "$name" | tr -c 'a-zA-Z0-9' '_').txt"
	t0=$(cpu_ticks); read -r s0 n0 < <(server_time); b0=$(buckets)
	if [ "$fixture" = healthz ]; then
		/usr/bin/time -f '%U %S' -o "$out.cpu" hey -z "$duration" -c "$conns" -q "$qps" "$@" "$url/healthz" >"$out"
	else
		/usr/bin/time -f '%U %S' -o "$out.cpu" hey -z "$duration" -c "$conns" -q "$qps" "$@" -m POST -T application/json \
			-D "$fixtures/requests/$fixture" "$url/validate" >"$out"
	fi
	local t1 s1 n1 b1
	t1=$(cpu_ticks); read -r s1 n1 < <(server_time); b1=$(buckets)
	awk -v name="$name" -v ticks=$((t1 - t0)) -v hz="$hz" -v s="$s0 $s1" -v n="$n0 $n1" -v b0="$b0" -v b1="$b1" \
		-v heycpu="$(awk '{ print $1 + $2 }' "$out.cpu")" '
		# q(f): the f quantile of the histogram delta b1 - b0, interpolated
		# linearly within its bucket (histogram_quantile); "" if empty.
		function q(f,   i, k, le, c, total, prev, prevle, want) {
			k = split(b1, one, " "); split(b0, zero, " ")
			for (i = 1; i <= k; i++) { split(one[i], x, ":"); split(zero[i], y, ":"); le[i] = x[1]; c[i] = x[2] - y[2] }
			total = c[k]; if (total <= 0) return ""
			want = f * total; prev = 0; prevle = 0
			for (i = 1; i <= k; i++) {
				if (c[i] >= want) {
					if (le[i] == "+Inf") return "> " prevle * 1000
					return sprintf("%.2f", (prevle + (le[i] - prevle) * (want - prev) / (c[i] - prev)) * 1000)
				}
				prev = c[i]; prevle = le[i]
			}
		}
		/Requests\/sec:/ { rps = $2 }
		/ 50% in / { p50 = $3 } / 90% in / { p90 = $3 } / 99% in / { p99 = $3 }
		/\[200\]/ { ok = $2 }
		/Error distribution/ { errs = 1 }
		END {
			split(s, ss, " "); split(n, nn, " "); reqs = nn[2] - nn[1]
			server = ""
			if (reqs == 0) { reqs = ok; ss[2] = ss[1] }  # /healthz is not a review
			else server = sprintf(" handler p50 %s ms p99 %s ms,", q(0.5), q(0.99))
			printf "%-28s %5.0f req/s  p50 %6.2f ms  p90 %6.2f ms  p99 %6.2f ms  | webhook CPU %4.0f us/req,%s handler mean %5.3f ms | hey CPU %4.0f us/req | 200s %s%s\n",
				name, rps, p50*1000, p90*1000, p99*1000, ticks / hz / reqs * 1e6, server, (ss[2] - ss[1]) / reqs * 1000, heycpu / ok * 1e6, ok,
				errs ? "  ERRORS: see hey output" : ""
		}
	' "$out"
	if grep -q "Error distribution" "$out"; then sed -n '/Error distribution/,$p' "$out" >&2; fi
}

echo "== $rate req/s for $duration, $conns connections (keep-alive), TLS 1.3 on loopback" >&2
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
run "baseline: GET /healthz" healthz
run "pod allowed" pod-allowed.json
run "pod denied (moved tag)" pod-moved-tag.json
run "deployment allowed" deployment.json
echo "== $((rate / 5)) req/s, a new TLS connection per request" >&2
qps=$(( rate / 5 / conns ))
run "pod allowed, no keep-alive" pod-allowed.json -disable-keepalive
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# webhook-p99 for bench/run.sh: the Pod-allowed p99 against the /healthz
# baseline's, in turn, ROUNDS times (hey's own figures, in ms).
p99_of() { awk '/ 99% in / { print $3 * 1000 }' "$1"; }
for round in $(seq "$ROUNDS"); do
	hey -z "$duration" -c "$conns" -q $((rate / conns)) -m POST -T application/json \
		-D "$fixtures/requests/pod-allowed.json" "$url/validate" >"$dir/p99-review.txt"
	hey -z "$duration" -c "$conns" -q $((rate / conns)) "$url/healthz" >"$dir/p99-healthz.txt"
	sample webhook-p99 lockstep "$(p99_of "$dir/p99-review.txt")" ms "webhook p99, Pod allowed, $rate req/s, $conns connections, TLS"
	if [ -n "${BEFORE:-}" ]; then
		hey -z "$duration" -c "$conns" -q $((rate / conns)) -m POST -T application/json \
			-D "$fixtures/requests/pod-allowed.json" "$before_url/validate" >"$dir/p99-before.txt"
		sample webhook-p99 before "$(p99_of "$dir/p99-before.txt")" ms "$BEFORE webhook p99, the same"
	fi
	sample webhook-p99 anchor "$(p99_of "$dir/p99-healthz.txt")" ms "GET /healthz p99, same rate (TLS and HTTP, no review)"
done

curl -fsS --cacert "$dir/ca.crt" "$url/metrics" | grep -E '^lockstep_webhook_requests_total' || true
if grep -v 'level=WARN msg="--insecure' "$dir/webhook.log" | grep -q 'level=ERROR'; then
	echo "webhook errors:" >&2; grep 'level=ERROR' "$dir/webhook.log" >&2
fi

[ "$QUICK" = 1 ] && exit 0
echo "== the handler alone (go test -bench)" >&2
go test ./admission/webhook -run '^$' -bench BenchmarkHandler -benchtime 3000x -benchmem | grep -E '^Benchmark'
