#!/usr/bin/env bash
# Benchmarks `lockstep webhook` over TLS on loopback: hey sends
# AdmissionReviews (the fixtures in admission/webhook/testdata) at a fixed
# rate, with a warm manifest cache, and this prints p50/p90/p99 latency and
# the achieved rate per scenario, with GET /healthz as a baseline (TLS and
# HTTP alone, no review). Then it runs the Go benchmark of the handler alone.
#
#   bench/webhook.sh [RATE [DURATION [CONNECTIONS]]]   (default 1000 10s 20)
#
# Needs go, openssl, hey, curl. Listens on 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

rate=${1:-1000} duration=${2:-10s} conns=${3:-20}
qps=$(( rate / conns ))   # hey's -q is per connection
fixtures=admission/webhook/testdata

for tool in go openssl hey curl; do
	command -v "$tool" >/dev/null || { echo "bench/webhook.sh: $tool is not installed" >&2; exit 2; }
done

dir=$(mktemp -d /tmp/lockstep-bench-webhook.XXXXXX)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$dir"
}
trap cleanup EXIT

echo "== building lockstep" >&2
go build -o "$dir/lockstep" ./cmd/lockstep

echo "== a CA and a serving certificate for 127.0.0.1" >&2
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=lockstep bench CA" \
	-keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=lockstep-webhook.lockstep.svc" \
	-keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:lockstep-webhook.lockstep.svc\nextendedKeyUsage=serverAuth\n' >"$dir/ext.cnf"
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial -days 1 \
	-extfile "$dir/ext.cnf" -out "$dir/tls.crt" 2>/dev/null

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=https://127.0.0.1:$port

echo "== lockstep webhook on $url" >&2
"$dir/lockstep" --log-level warn webhook --listen "127.0.0.1:$port" --tls-cert "$dir/tls.crt" --tls-key "$dir/tls.key" \
	--manifest "$fixtures/manifest.json" --insecure-allow-unsigned --refresh 30s 2>"$dir/webhook.log" &
pid=$!
for _ in $(seq 100); do
	curl -fsS --cacert "$dir/ca.crt" "$url/readyz" >/dev/null 2>&1 && break
	sleep 0.1
done
curl -fsS --cacert "$dir/ca.crt" "$url/readyz" >&2

# Warm up: connections, the manifest index, the Go runtime.
hey -n 2000 -c "$conns" -m POST -T application/json -D "$fixtures/requests/pod-allowed.json" "$url/validate" >/dev/null

# cpu_ticks: the webhook process's user+system CPU time, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
# server_time: the handler's total seconds and count, from /metrics.
server_time() {
	curl -fsS --cacert "$dir/ca.crt" "$url/metrics" |
		awk '/^lockstep_webhook_request_duration_seconds_sum/ { s = $2 } /^lockstep_webhook_request_duration_seconds_count/ { n = $2 } END { print s, n }'
}
hz=$(getconf CLK_TCK)

# run NAME FIXTURE [hey flags]: one measured scenario. Besides hey's
# client-side latency, it reports the webhook's CPU time per request (what
# the machine's load does not change much) and the mean time in the handler.
run() {
	local name=$1 fixture=$2; shift 2
	local t0 s0 n0 out
	out="$dir/$(printf '%s' "$name" | tr -c 'a-zA-Z0-9' '_').txt"
	t0=$(cpu_ticks); read -r s0 n0 < <(server_time)
	if [ "$fixture" = healthz ]; then
		hey -z "$duration" -c "$conns" -q "$qps" "$@" "$url/healthz" >"$out"
	else
		hey -z "$duration" -c "$conns" -q "$qps" "$@" -m POST -T application/json \
			-D "$fixtures/requests/$fixture" "$url/validate" >"$out"
	fi
	local t1 s1 n1
	t1=$(cpu_ticks); read -r s1 n1 < <(server_time)
	awk -v name="$name" -v ticks=$((t1 - t0)) -v hz="$hz" -v s="$s0 $s1" -v n="$n0 $n1" '
		/Requests\/sec:/ { rps = $2 }
		/ 50% in / { p50 = $3 } / 90% in / { p90 = $3 } / 99% in / { p99 = $3 }
		/\[200\]/ { ok = $2 }
		/Error distribution/ { errs = 1 }
		END {
			split(s, ss, " "); split(n, nn, " "); reqs = nn[2] - nn[1]
			if (reqs == 0) { reqs = ok; ss[2] = ss[1] }  # /healthz is not a review
			printf "%-28s %5.0f req/s  p50 %6.2f ms  p90 %6.2f ms  p99 %6.2f ms  | webhook CPU %4.0f us/req, handler mean %5.3f ms | 200s %s%s\n",
				name, rps, p50*1000, p90*1000, p99*1000, ticks / hz / reqs * 1e6, (ss[2] - ss[1]) / reqs * 1000, ok,
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

curl -fsS --cacert "$dir/ca.crt" "$url/metrics" | grep -E '^lockstep_webhook_requests_total' || true
if grep -v 'level=WARN msg="--insecure' "$dir/webhook.log" | grep -q 'level=ERROR'; then
	echo "webhook errors:" >&2; grep 'level=ERROR' "$dir/webhook.log" >&2
fi

echo "== the handler alone (go test -bench)" >&2
go test ./admission/webhook -run '^$' -bench BenchmarkHandler -benchtime 3000x -benchmem | grep -E '^Benchmark'
