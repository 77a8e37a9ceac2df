# bench/lib.sh: what the bench scripts share (sourced, not run).
#
# sample NAME ROLE VALUE UNIT LABEL prints one measurement as the line that
# bench/run.sh collects:
#
#	bench NAME ROLE VALUE UNIT LABEL
#
# NAME is the benchmark (a row of bench/run.sh's table), ROLE is `lockstep`
# (what is measured) or `anchor` (what it is compared with), VALUE a number
# in UNIT (ms, s, us), LABEL the rest of the line, what ran. A script that
# compares interleaves its variants (A B A B ...) so that both share the
# machine's changing load, and prints one line per variant per round.
sample() { printf 'bench %s %s %s %s %s\n' "$1" "$2" "$3" "$4" "$5"; }

# free_port prints a free TCP port on 127.0.0.1.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# now_ns prints the time in nanoseconds; ms_since T0 the milliseconds since.
now_ns() { date +%s%N; }
ms_since() { echo "scale=3; ($(date +%s%N) - $1) / 1000000" | bc; }

# release_build OUT PKG [LDFLAGS] builds PKG as the release builds lockstep
# (.goreleaser.yaml: static, trimmed paths, LDFLAGS "-s -w": no symbol
# table), so that the figures are those of the binary users run: a default
# go build links libc and starts about 2 ms slower (docs/benchmarks.md).
# build_lockstep OUT is that build of lockstep (scripts/test.sh builds the
# tests' $LOCKSTEP_TEST_BIN with it too).
release_build() { CGO_ENABLED=0 go build -trimpath -ldflags "${3--s -w}" -o "$1" "$2"; }
build_lockstep() { release_build "$1" ./cmd/lockstep; }

# lockstep_bin DIR prints the lockstep binary to measure: $LOCKSTEP_BIN when
# bench/run.sh built one, else a fresh build in DIR.
lockstep_bin() {
	if [ -n "${LOCKSTEP_BIN:-}" ]; then echo "$LOCKSTEP_BIN"; return; fi
	build_lockstep "$1/lockstep" && echo "$1/lockstep"
}

# gobench TEST NAME ROLE BENCHMARK PER LABEL runs BENCHMARK of the Go test
# binary TEST once, for $BENCHTIME (default 1s), and prints its sample:
# ns/op divided by PER, in microseconds, labelled "BENCHMARK, LABEL" (the
# benchmark's own line is kept as a comment).
gobench() {
	"$1" -test.run '^$' -test.bench "^$4\$" -test.benchtime "${BENCHTIME:-1s}" -test.benchmem |
		awk -v name="$2" -v role="$3" -v bench="$4" -v per="$5" -v label="$6" '/^Benchmark/ {
			for (i = 1; i < NF; i++) if ($(i + 1) == "ns/op") ns = $i
			printf "# %s\n", $0
			printf "bench %s %s %.3f us %s, %s\n", name, role, ns / per / 1000, bench, label }'
}

# nginx_conf DIR CONNECTIONS writes DIR/nginx.conf for one nginx process in
# the foreground that is its own worker (master_process off: the PID the
# script starts is the one serving), with CONNECTIONS connections, its logs,
# PID and temporary files under DIR, JavaScript as the default type and
# keep-alive connections that last the whole run; the lines of its http
# block that are the script's own (servers, roots, logs) come on stdin.
nginx_conf() {
	mkdir -p "$1/logs" "$1/tmp"
	{
		cat <<CONF
daemon off;
master_process off;
worker_processes 1;
error_log $1/logs/error.log warn;
pid $1/nginx.pid;
events { worker_connections $2; }
http {
  client_body_temp_path $1/tmp;
  proxy_temp_path $1/tmp;
  fastcgi_temp_path $1/tmp;
  uwsgi_temp_path $1/tmp;
  scgi_temp_path $1/tmp;
  default_type application/javascript;
  keepalive_requests 10000000;
CONF
		cat
		echo "}"
	} >"$1/nginx.conf"
}
