#!/usr/bin/env bash
# Benchmarks lockstep's asset hashing on a generated tree (1 GiB in 20,000
# files by default, page-cached, under /tmp) against, in the same run:
#   - single-process coreutils sha256sum over the same files;
#   - the limit: CPUs × Go's single-core SHA-256 rate (sha256.Sum256 on
#     1 MiB blocks, BenchmarkSHA256).
# lockstep is timed twice: `lockstep record` with no images (the whole
# command: start, walk, hash, encode, write) and the library alone
# (BenchmarkHash). Each figure is the best of RUNS runs: the machine is
# shared, and the best run is the one least disturbed. The variants take
# turns, round after round, and each run of `lockstep record` and of
# sha256sum is also a `bench` line (bench/lib.sh) for bench/run.sh.
# Targets: ≥ 3× sha256sum, ≥ 70% of the limit.
#   bench/hash.sh [DIR]      (RUNS=3 FILES=20000 BYTES=1073741824)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
DIR=${1:-/tmp/lockstep-bench-hash}
RUNS=${RUNS:-3}
FILES=${FILES:-20000}
BYTES=${BYTES:-1073741824}
CPUS=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "$(find "$DIR" -type f 2>/dev/null | wc -l)" -ne "$FILES" ]; then
  echo "hash.sh: generating $FILES files, $BYTES bytes in $DIR" >&2
  rm -rf "$DIR"
  go run ./bench/gentree -files "$FILES" -bytes "$BYTES" "$DIR"
fi
total=$(find "$DIR" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
echo "hash.sh: warming the page cache" >&2
find "$DIR" -type f -print0 | xargs -0 cat >/dev/null

if [ -n "${LOCKSTEP_BIN:-}" ]; then ln -s "$LOCKSTEP_BIN" "$work/lockstep"; else go build -o "$work/lockstep" ./cmd/lockstep; fi
go test -c -o "$work/assets.test" ./manifest/assets

# measure NAME CMD...: one run; keeps the best wall time so far and the CPU
# seconds (user + sys) of that run in $work/NAME, and prints the run's
# wall time as a bench line when $ROLE is set.
measure() {
  local name=$1; shift
  local best="" line
  [ -f "$work/$name" ] && best=$(cat "$work/$name")
  local t0
  t0=$(now_ns)
  /usr/bin/time -f "%e %U %S" -o "$work/time" bash -c "$*" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
  t0=$(echo "scale=4; ($(now_ns) - $t0) / 1000000000" | bc)
  line=$(tail -1 "$work/time")
  if [ -z "$best" ] || [ "$(echo "${line%% *} < ${best%% *}" | bc -l)" = 1 ]; then best=$line; fi
  echo "$best" >"$work/$name"
  if [ -n "${ROLE:-}" ]; then sample hash "$ROLE" "$t0" s "$LABEL"; fi
}
sha256sum_one() { find "$DIR" -type f -print0 | xargs -0 -P1 sha256sum; }
lockstep_record() {
  "$work/lockstep" --log-level warn record --release bench --generation 1 --assets "$DIR" --cdn https://cdn.example/ --output "$work/m.json"
}
library() { # a first Hash, then 3 timed: 4 in the process's CPU time
  LOCKSTEP_BENCH_TREE=$DIR "$work/assets.test" -test.run XXX -test.bench '^BenchmarkHash$' -test.benchtime 3x | tee -a "$work/library.out"
}
sum256() { # 1 MiB blocks, one core: 1 + 2000 iterations
  "$work/assets.test" -test.run XXX -test.bench '^BenchmarkSHA256$' -test.benchtime 2000x
}

export DIR work
export -f sha256sum_one lockstep_record library sum256
echo "hash.sh: timing lockstep record, sha256sum (one process), the library (BenchmarkHash) and Go's single-core SHA-256 (BenchmarkSHA256), $RUNS rounds" >&2
for _ in $(seq "$RUNS"); do
  ROLE=lockstep LABEL="lockstep record of $FILES files, $BYTES bytes" measure record lockstep_record
  ROLE=anchor LABEL="sha256sum (one process) of the same files" measure sha256sum sha256sum_one
  measure library library
  measure sha sum256
done

files=$(grep -o '"path"' "$work/m.json" | wc -l)
# The library's wall time is BenchmarkHash's best ns/op; its CPU time is a
# quarter of its process's (four Hash calls). The SHA-256 benchmark hashes
# 2001 MiB.
ns=$(awk '/ns\/op/ {for (i=1;i<=NF;i++) if ($(i+1)=="ns/op") print $i}' "$work/library.out" | sort -g | head -1)
read -r w_sum c_sum_u c_sum_s <"$work/sha256sum"
read -r w_rec c_rec_u c_rec_s <"$work/record"
read -r _ c_lib_u c_lib_s <"$work/library"
w_lib=$(echo "$ns / 1000000000" | bc -l)
read -r w_sha c_sha_u c_sha_s <"$work/sha"
awk -v total="$total" -v cpus="$CPUS" -v files="$files" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" \
  -v ws="$w_sum" -v cs="$(echo "$c_sum_u + $c_sum_s" | bc -l)" \
  -v wr="$w_rec" -v cr="$(echo "$c_rec_u + $c_rec_s" | bc -l)" \
  -v wl="$w_lib" -v cl="$(echo "($c_lib_u + $c_lib_s) / 4" | bc -l)" \
  -v wh="$w_sha" -v ch="$(echo "$c_sha_u + $c_sha_s" | bc -l)" 'BEGIN {
  gb = 1e9; shabytes = 2001 * 1048576
  one = shabytes / wh / gb; onecpu = shabytes / ch / gb; limit = cpus * one
  printf "tree: %d files, %.2f GiB, page-cached; %d CPUs; load average %s (shared machine)\n", files, total / 1073741824, cpus, load
  printf "%-34s %8s %8s %9s %9s %11s\n", "", "wall s", "CPU s", "GB/s", "GB/CPU-s", "vs sha256sum"
  row("sha256sum, one process", ws, cs, total, total / ws)
  row("lockstep record (whole command)", wr, cr, total, total / ws)
  row("lockstep hashing (library)", wl, cl, total, total / ws)
  row("Go sha256.Sum256, 1 core, 1 MiB", wh, ch, shabytes, 0)
  printf "limit: %d CPUs x %.2f GB/s = %.2f GB/s (wall, as measured in this run)\n", cpus, one, limit
  printf "record:  %3.0f%% of the limit, %.2fx sha256sum (wall)   | CPU efficiency %3.0f%% of Sum256, %.2fx sha256sum per CPU-s\n", \
    100 * total / wr / gb / limit, ws / wr, 100 * total / cr / gb / onecpu, cs / cr
  printf "library: %3.0f%% of the limit, %.2fx sha256sum (wall)   | CPU efficiency %3.0f%% of Sum256, %.2fx sha256sum per CPU-s\n", \
    100 * total / wl / gb / limit, ws / wl, 100 * total / cl / gb / onecpu, cs / cl
  printf "targets: >= 3x sha256sum, >= 70%% of the limit\n"
}
function row(name, w, c, bytes, base) {
  if (base > 0) printf "%-34s %8.2f %8.2f %9.2f %9.2f %10.2fx\n", name, w, c, bytes / w / gb, bytes / c / gb, bytes / w / base
  else printf "%-34s %8.2f %8.2f %9.2f %9.2f %11s\n", name, w, c, bytes / w / gb, bytes / c / gb, "-"
}'
