#!/usr/bin/env bash
# Runs every lockstep test on this machine, fresh or not: installs what is
# missing (scripts/install-deps.sh: Debian's packages, and the pinned Go
# tools once per machine), builds the snapshot release of the host's
# platform when its inputs changed (scripts/release-snapshot.sh, cached per
# machine), starts radosgw beside gofmt, go vet and staticcheck, then the unit
# and integration tests under the race detector. Exits non-zero on any
# finding or failure. .ci/run calls this.
#
# It ends with where the time went: each step, the slowest packages and
# tests (scripts/testreport), also kept in .cache/test-times.txt; go
# test's events (-json) are kept in .cache/test-events.json.
#
# Fast by default, complete on request: every unit and integration test
# runs, under -race, with the real servers; LOCKSTEP_TEST_FULL=1 (which
# .ci/run sets, so every landing runs it) adds what is long and not a
# contributor's every push: the whole four-platform release matrix
# (LOCKSTEP_TEST_RELEASE_ALL=1: scripts/release-snapshot.sh --all, as the
# release workflow builds it, and ko's image of every platform), lint
# reports made afresh (a contributor's run reads back a clean report of
# an unchanged package), the benchmark scripts' smoke test
# (LOCKSTEP_TEST_BENCH=1: bench.TestRunQuick, about two minutes; either of
# those two may also be set alone) and the boot gate's walk-through on
# systemd instances (scripts.TestBootGateWalkthrough, about 90 s). A test left out for want of the flag
# says so in its skip message.
#
# LOCKSTEP_TEST_RELEASE=0 skips the release path. LOCKSTEP_TEST_RACE=0 runs
# the tests without the race detector. Arguments go to go test.
set -euo pipefail
cd "$(dirname "$0")/.."
export LOCKSTEP_INTEGRATION=1
if [ "${LOCKSTEP_TEST_FULL:-0}" = 1 ]; then
  export LOCKSTEP_TEST_RELEASE_ALL=1 LOCKSTEP_TEST_BENCH=1
fi
export LOCKSTEP_TEST_FULL=${LOCKSTEP_TEST_FULL:-0}
export PATH="$PWD/.cache/bin:$PATH"
mkdir -p .cache

steps=()
t0=$SECONDS last=$SECONDS
step() { # NAME: closes the step that ran since the last call
  steps+=("$(printf '%6d s  %s' $((SECONDS - last)) "$1")")
  last=$SECONDS
}
summary() {
  {
    echo "== where the time went (scripts/test.sh, $((SECONDS - t0)) s in all)"
    printf '%s\n' "${steps[@]}"
    [ -f .cache/test-report.txt ] && cat .cache/test-report.txt
  } >.cache/test-times.txt
  cat .cache/test-times.txt >&2
}

# await VAR LOG WHAT: waits for the step begun in the background whose pid
# is in VAR, clears VAR (cleanup then leaves it be), prints the step's LOG,
# and ends the run if the step failed.
await() {
  local rc=0
  wait "${!1}" || rc=$?
  printf -v "$1" ''
  cat "$2" >&2
  [ "$rc" = 0 ] || { echo "test.sh: $3 failed (above)" >&2; exit 1; }
}

# On a fresh machine the release tools, and lockstep's own modules, come
# from the module proxy while install-deps builds its tools: each waits on
# downloads and links as much as it computes. Warm, all three are
# instant.
rel_pid=
if [ "${LOCKSTEP_TEST_RELEASE:-1}" = 1 ]; then
  scripts/install-release-tools.sh &
  rel_pid=$!
fi
go mod download >.cache/mod-download.log 2>&1 &
mod_pid=$!
scripts/install-deps.sh
await mod_pid .cache/mod-download.log "go mod download"
[ -z "$rel_pid" ] || await rel_pid /dev/null scripts/install-release-tools.sh
step "install-deps (Debian packages, cosign, staticcheck, crane, helm, kube-apiserver), install-release-tools (goreleaser, ko, cyclonedx-gomod), go mod download"

# radosgw starts now, beside the release path, gofmt, vet and staticcheck
# (its start is mostly waiting on its daemons); the tests wait for it. On
# free ports, retried when its start fails; on failure the run prints its
# logs and what to do. Whatever ends the run lets the start end, then
# stops the daemons it started (cleanup).
RGW_DIR=$(mktemp -d /tmp/lockstep-rgw.XXXXXX)
scripts/radosgw.sh start "$RGW_DIR" >"$RGW_DIR.log" 2>&1 &
rgw_pid=$!
snap_pid=
# cleanup runs at the end of the run, whatever ends it: it stops the
# snapshot, lets radosgw's start end (killing it left its attempt, a
# subshell, starting daemons after the stop had looked), then stops
# radosgw. set +e: before, a failed wait ended the trap there, the run
# exited 143 and radosgw's daemons were left running.
cleanup() {
  set +e
  [ -n "$snap_pid" ] && kill -- -"$snap_pid" 2>/dev/null
  if [ -n "$rgw_pid" ] && kill -0 "$rgw_pid" 2>/dev/null; then
    echo "test.sh: letting radosgw's start end, to stop it" >&2
    wait "$rgw_pid" 2>/dev/null
  fi
  scripts/radosgw.sh stop "$RGW_DIR"
  rm -rf "$RGW_DIR" "$RGW_DIR.log"
}
trap cleanup EXIT
# The release path: the goreleaser snapshot into dist/ (scripts/release_test.go
# checks it) and the ko image (scripts/image_test.go). The snapshot is of the
# host's platform, rebuilt only when its inputs changed and kept per machine
# (a few minutes cold on two cores, nothing warm); LOCKSTEP_TEST_RELEASE=0
# skips the release path for a quick run. It builds beside gofmt, vet and
# staticcheck (GoReleaser's archives, packages and SBOM are mostly one
# thread each), in a process group of its own that whatever ends the run
# stops; the tests wait for it.
if [ "${LOCKSTEP_TEST_RELEASE:-1}" = 1 ]; then
  export LOCKSTEP_TEST_RELEASE=1
  snap_args=()
  [ "${LOCKSTEP_TEST_RELEASE_ALL:-0}" = 1 ] && snap_args=(--all)
  setsid scripts/release-snapshot.sh "${snap_args[@]}" >.cache/release-snapshot.log 2>&1 &
  snap_pid=$!
else
  export LOCKSTEP_TEST_RELEASE=0
fi

echo "== gofmt" >&2
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
if [ -n "$bad" ]; then echo "gofmt would change:"; echo "$bad"; exit 1; fi
# Every test runs once, under the race detector (LOCKSTEP_TEST_RACE=0
# runs them without it).
race=-race
[ "${LOCKSTEP_TEST_RACE:-1}" = 0 ] && race=
# go vet and staticcheck compile every package they check, and its
# dependencies, to read their types; with the tests' own flags ($race;
# staticcheck's go list takes them from GOFLAGS) that compile is the one the
# tests reuse: the packages only the tests import (containerd's client, rod,
# ...) and every package's test variant are compiled once, not once for vet
# and again for the tests (on a fresh machine, 107 CPU-seconds and 55 s
# less).
echo "== go vet $race" >&2
go vet $race ./...
step "gofmt, go vet"
echo "== staticcheck" >&2
GOFLAGS="${GOFLAGS:+$GOFLAGS }$race" staticcheck ./...
step "staticcheck"

echo "== radosgw" >&2
await rgw_pid "$RGW_DIR.log" "radosgw's start"
. "$RGW_DIR/env"
export LOCKSTEP_TEST_S3_ENDPOINT
export LOCKSTEP_TEST_S3_ACCESS_KEY=RGWAK LOCKSTEP_TEST_S3_SECRET_KEY=RGWSECRET
export LOCKSTEP_TEST_COSIGN="$PWD/.cache/bin/cosign"
step "radosgw (the wait for its start, begun after install-deps)"

if [ -n "$snap_pid" ]; then
  echo "== release-snapshot" >&2
  await snap_pid .cache/release-snapshot.log scripts/release-snapshot.sh
  step "release-snapshot (the wait for it, begun beside gofmt, vet and staticcheck)"
fi

# A binary built with -race sleeps a second before it exits
# (atexit_sleep_ms, default 1000), so that a racing goroutine's report
# can still print: a second for each of the 93 test binaries and for every
# race-built helper a test starts. A race is reported when it happens, not
# at exit, so the run keeps none of those seconds (GORACE set by the
# caller wins).
export GORACE=${GORACE:-atexit_sleep_ms=0}
echo "== go test $race" >&2
go build -o .cache/testreport ./scripts/testreport
# One lockstep binary for the tests that run it as a user would (the hook
# script, the quickstart, the Action, the agentless fleet:
# testenv.Lockstep), linked once a run instead of once a package. It is
# built as the release builds it (bench/lib.sh's build_lockstep, as the
# benchmarks build it: static, CGO_ENABLED=0, -trimpath, as in
# .goreleaser.yaml and .ko.yaml), so those tests run what users install,
# and its compile is the snapshot's and ko's: on a fresh machine a build of
# its own compiled lockstep's whole graph once more (463 CPU-seconds on
# the slower machine of the figures in DEVELOPERS.md). Not with -race: the
# tests that run it took 35 s more a warm run with a race-built one.
. bench/lib.sh
build_lockstep .cache/test-bin/lockstep
export LOCKSTEP_TEST_BIN="$PWD/.cache/test-bin/lockstep"
rm -f .cache/test-report.txt
# Each package's test binary is kept in .cache/test-bin/MODE/N/ (go test
# -o DIR/), and go test links it again only when its build ID changed: an
# unchanged package's tests run again without a new link (about 1.3
# CPU-seconds a package under -race, 118 CPU-seconds for all 93). -s -w
# is what go test links with when it keeps no binary. A directory holds one
# binary per name (the last element of the import path), so packages that
# share a name go to the next directory and the next go test, one after
# the other: of those, the one with the most test files goes first, so
# that what runs alone at the end is short.
mode=race
[ -z "$race" ] && mode=plain
layers=$(go list -f '{{len .TestGoFiles}} {{len .XTestGoFiles}} {{.ImportPath}}' ./... |
  awk '{ n = split($3, p, "/"); print p[n], $1 + $2, $3 }' | sort -k1,1 -k2,2nr -s |
  awk '{ print ++seen[$1], $3 }' | sort -k2,2)
[ -n "$layers" ] || { echo "go list ./... named no package" >&2; exit 1; }
set +e
(
  rc=0
  for layer in $(echo "$layers" | cut -d' ' -f1 | sort -nu); do
    mkdir -p ".cache/test-bin/$mode/$layer"
    # -vet=off: go vet ./... (every analyzer, a superset of go test's) ran above.
    go test $race -vet=off -count=1 -timeout 20m -ldflags='-s -w' -o ".cache/test-bin/$mode/$layer/" -json "$@" \
      $(echo "$layers" | awk -v l="$layer" '$1 == l { print $2 }') || rc=1
  done
  exit $rc
) | tee .cache/test-events.json | .cache/testreport -o .cache/test-report.txt 2>/dev/null
rc=${PIPESTATUS[0]}
set -e
step "go test $race (build and run)"
summary
exit "$rc"
