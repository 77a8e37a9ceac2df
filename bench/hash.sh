#!/usr/bin/env bash
# Benchmarks lockstep's asset hashing on a generated tree (1 GiB in 20,000
# files by default, page-cached, under /tmp) against, in the same run:
#   - single-process coreutils sha256sum over the same files;
#   - the limit: CPUs × Go's single-core SHA-256 rate (sha256.Sum256 on
#     1 MiB blocks, BenchmarkSHA256);
#   - the ceiling: Go's SHA-256 on every CPU at once
#     (BenchmarkSHA256Parallel), what the machine gives in place of the
#     limit's CPUs × one core.
# lockstep is timed twice: `lockstep record` with no images (the whole
# command: start, walk, hash, encode, write) and the library alone
# (BenchmarkHash). BEFORE=BIN also times BIN's `lockstep record` each
# round (role `before`): a change's before/after in the same interleaved
# run. The variants take turns, round after round (the machine is shared:
# each round meets the same load), and each figure is the min and the
# median of ROUNDS runs; the limit is taken from the fastest SHA-256 run
# (the one least disturbed). Each run of `lockstep record`, of BEFORE's
# and of sha256sum is also a `bench` line (bench/lib.sh) for bench/run.sh.
# Targets: ≥ 3× sha256sum, ≥ 70% of the limit.
#   bench/hash.sh [DIR]      (ROUNDS=5 FILES=20000 BYTES=1073741824 BEFORE=)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
DIR=${1:-/tmp/lockstep-bench-hash}
ROUNDS=${ROUNDS:-${RUNS:-5}} # RUNS: the name bench/run.sh passes
BEFORE=${BEFORE:-}
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

if [ -n "${LOCKSTEP_BIN:-}" ]; then ln -s "$LOCKSTEP_BIN" "$work/lockstep"; else build_lockstep "$work/lockstep"; fi
go test -c -o "$work/assets.test" ./manifest/assets

# measure NAME CMD...: one run; appends its wall time and CPU seconds
# (user + sys) to $work/NAME, and prints the wall time as a bench line
# when $ROLE is set.
measure() {
  local name=$1; shift
  local t0
  t0=$(now_ns)
  /usr/bin/time -f "%e %U %S" -o "$work/time" bash -c "$*" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
  t0=$(echo "scale=4; ($(now_ns) - $t0) / 1000000000" | bc)
  tail -1 "$work/time" | awk '{print $1, $2 + $3}' >>"$work/$name"
  if [ -n "${ROLE:-}" ]; then sample hash "$ROLE" "$t0" s "$LABEL"; fi
}
sha256sum_one() { find "$DIR" -type f -print0 | xargs -0 -P1 sha256sum; }
lockstep_record() { # [BIN]
  "${1:-$work/lockstep}" --log-level warn record --release bench --generation 1 --assets "$DIR" --cdn https://cdn.example/ --output "$work/m.json"
}
library() { # a first Hash, then 3 timed: 4 in the process's CPU time
  LOCKSTEP_BENCH_TREE=$DIR "$work/assets.test" -test.run XXX -test.bench '^BenchmarkHash$' -test.benchtime 3x | tee -a "$work/library.out"
}
sum256() { # 1 MiB blocks, one core: 1 + 2000 iterations
  "$work/assets.test" -test.run XXX -test.bench '^BenchmarkSHA256$' -test.benchtime 2000x
}
sum256all() { # the same 2001 blocks shared by one goroutine a CPU: the machine's own ceiling
  "$work/assets.test" -test.run XXX -test.bench '^BenchmarkSHA256Parallel$' -test.benchtime 2000x
}

export DIR work
export -f sha256sum_one lockstep_record library sum256 sum256all
echo "hash.sh: timing lockstep record${BEFORE:+, $BEFORE record}, sha256sum (one process), the library (BenchmarkHash) and Go's SHA-256 on one core and on all (BenchmarkSHA256, BenchmarkSHA256Parallel), $ROUNDS rounds" >&2
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $CPUS cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$ROUNDS"); do
  ROLE=lockstep LABEL="lockstep record of $FILES files, $BYTES bytes" measure record lockstep_record
  [ -z "$BEFORE" ] || ROLE=before LABEL="$BEFORE record of the same files" measure before lockstep_record "$BEFORE"
  ROLE=anchor LABEL="sha256sum (one process) of the same files" measure sha256sum sha256sum_one
  measure library library
  measure sha sum256
  measure shaall sum256all
done

files=$(grep -o '"path"' "$work/m.json" | wc -l)
# The library's wall time per run is BenchmarkHash's ns/op; its CPU time a
# quarter of its process's (four Hash calls). The SHA-256 benchmark hashes
# 2001 MiB.
awk '/ns\/op/ {for (i=1;i<=NF;i++) if ($(i+1)=="ns/op") print $i / 1e9}' "$work/library.out" >"$work/library.wall"
paste -d' ' "$work/library.wall" <(awk '{print $2 / 4}' "$work/library") >"$work/library.runs"
# stats FILE: min and median wall, median CPU of a file of "wall cpu" lines.
stats() {
  sort -g "$1" | awk '{w[NR]=$1} END {m = (NR % 2) ? w[(NR+1)/2] : (w[NR/2] + w[NR/2+1]) / 2; printf "%s %s ", w[1], m}'
  sort -g -k2 "$1" | awk '{c[NR]=$2} END {m = (NR % 2) ? c[(NR+1)/2] : (c[NR/2] + c[NR/2+1]) / 2; print m}'
}
{
  echo "sha256sum $(stats "$work/sha256sum")"
  echo "record $(stats "$work/record")"
  [ -z "$BEFORE" ] || echo "before $(stats "$work/before")"
  echo "library $(stats "$work/library.runs")"
  echo "sha $(stats "$work/sha")"
  echo "shaall $(stats "$work/shaall")"
} >"$work/stats"
awk -v total="$total" -v cpus="$CPUS" -v files="$files" -v rounds="$ROUNDS" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" '
{ min[$1] = $2; med[$1] = $3; cpu[$1] = $4 }
END {
  gb = 1e9; shabytes = 2001 * 1048576
  one = shabytes / min["sha"] / gb; limit = cpus * one; onecpu = shabytes / cpu["sha"] / gb
  printf "tree: %d files, %.2f GiB, page-cached; %d CPUs; %d rounds; load average at the end %s (shared machine)\n", files, total / 1073741824, cpus, rounds, load
  printf "%-34s %8s %8s %8s %9s %13s %8s\n", "", "min s", "median s", "CPU s", "GB/s", "vs sha256sum", "of limit"
  row("sha256sum, one process", "sha256sum")
  row("lockstep record (whole command)", "record")
  if ("before" in min) row("BEFORE record (whole command)", "before")
  row("lockstep hashing (library)", "library")
  printf "%-34s %8.2f %8.2f %8.2f %9.2f\n", "Go sha256.Sum256, 1 core, 1 MiB", min["sha"], med["sha"], cpu["sha"], shabytes / min["sha"] / gb
  printf "%-34s %8.2f %8.2f %8.2f %9.2f\n", "Go sha256.Sum256, " cpus " cores at once", min["shaall"], med["shaall"], cpu["shaall"], shabytes / min["shaall"] / gb
  printf "limit: %d CPUs x %.2f GB/s = %.2f GB/s (the fastest SHA-256 run); Sum256 %.2f GB per CPU-s\n", cpus, one, limit, onecpu
  all = shabytes / min["shaall"] / gb
  printf "ceiling: Sum256 on %d cores at once %.2f GB/s (the fastest run), %.2fx one core, %3.0f%% of the limit\n", cpus, all, all / one, 100 * all / limit
  printf "record:  %3.0f%% of the limit (min), %3.0f%% (median); %.2fx sha256sum (ratio of medians); CPU efficiency %3.0f%% of Sum256\n", \
    100 * total / min["record"] / gb / limit, 100 * total / med["record"] / gb / limit, med["sha256sum"] / med["record"], 100 * total / cpu["record"] / gb / onecpu
  if ("before" in min) printf "before:  %3.0f%% of the limit (min), %3.0f%% (median); %.2fx sha256sum; record / before, ratio of medians %.2f (min %.2f)\n", \
    100 * total / min["before"] / gb / limit, 100 * total / med["before"] / gb / limit, med["sha256sum"] / med["before"], med["record"] / med["before"], min["record"] / min["before"]
  printf "library: %3.0f%% of the limit (min), %3.0f%% (median); %.2fx sha256sum (ratio of medians); CPU efficiency %3.0f%% of Sum256\n", \
    100 * total / min["library"] / gb / limit, 100 * total / med["library"] / gb / limit, med["sha256sum"] / med["library"], 100 * total / cpu["library"] / gb / onecpu
  printf "of the ceiling: record %3.0f%% (min), %3.0f%% (median); library %3.0f%% (min), %3.0f%% (median)\n", \
    100 * total / min["record"] / gb / all, 100 * total / med["record"] / gb / all, 100 * total / min["library"] / gb / all, 100 * total / med["library"] / gb / all
  printf "targets: >= 3x sha256sum, >= 70%% of the limit\n"
}
function row(name, k) {
  printf "%-34s %8.2f %8.2f %8.2f %9.2f %12.2fx %7.0f%%\n", name, min[k], med[k], cpu[k], total / med[k] / gb, med["sha256sum"] / med[k], 100 * total / min[k] / gb / limit
}' "$work/stats"
