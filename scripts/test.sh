#!/usr/bin/env bash
# Runs every lockstep test on this machine, fresh or not: installs what is
# missing (scripts/install-deps.sh), starts radosgw, then gofmt, go vet,
# staticcheck, and the unit and integration tests under the race
# detector. Exits non-zero on any finding or failure. .ci/run calls this.
set -euo pipefail
cd "$(dirname "$0")/.."
export LOCKSTEP_INTEGRATION=1
export PATH="$PWD/.cache/bin:$PATH"

scripts/install-deps.sh
# The release path: the goreleaser snapshot into dist/ (scripts/release_test.go
# checks it) and the ko image (scripts/image_test.go). The snapshot is
# rebuilt only when its inputs changed (about 13 minutes cold on two cores,
# under a minute warm); LOCKSTEP_TEST_RELEASE=0 skips the release path for a
# quick run.
if [ "${LOCKSTEP_TEST_RELEASE:-1}" = 1 ]; then
  export LOCKSTEP_TEST_RELEASE=1
  scripts/install-release-tools.sh
  scripts/release-snapshot.sh
else
  export LOCKSTEP_TEST_RELEASE=0
fi

echo "== gofmt" >&2
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
if [ -n "$bad" ]; then echo "gofmt would change:"; echo "$bad"; exit 1; fi
echo "== go vet" >&2
go vet ./...
echo "== staticcheck" >&2
staticcheck ./...

RGW_DIR=$(mktemp -d /tmp/lockstep-rgw.XXXXXX)
trap 'scripts/radosgw.sh stop "$RGW_DIR"' EXIT
echo "== radosgw" >&2
# On free ports, retried when its start fails; on failure it prints its
# logs and what to do.
scripts/radosgw.sh start "$RGW_DIR"
. "$RGW_DIR/env"
export LOCKSTEP_TEST_S3_ENDPOINT
export LOCKSTEP_TEST_S3_ACCESS_KEY=RGWAK LOCKSTEP_TEST_S3_SECRET_KEY=RGWSECRET
export LOCKSTEP_TEST_COSIGN="$PWD/.cache/bin/cosign"

# Every test runs once, under the race detector (LOCKSTEP_TEST_RACE=0
# runs them without it).
race=-race
[ "${LOCKSTEP_TEST_RACE:-1}" = 0 ] && race=
echo "== go test $race" >&2
go test $race -count=1 -timeout 20m "$@" ./...
