#!/usr/bin/env bash
# Runs every lockstep test on this machine, fresh or not: installs what is
# missing (scripts/install-deps.sh), starts radosgw, then gofmt, go vet,
# staticcheck, and the unit and integration tests. Exits non-zero on any
# finding or failure. .ci/run calls this.
set -euo pipefail
cd "$(dirname "$0")/.."
export LOCKSTEP_INTEGRATION=1
export PATH="$PWD/.cache/bin:$PATH"

scripts/install-deps.sh
scripts/release-snapshot.sh  # the snapshot release into dist/, only when its inputs changed (scripts/release_test.go reads it)

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
scripts/radosgw.sh start "$RGW_DIR"
export LOCKSTEP_TEST_S3_ENDPOINT=http://127.0.0.1:${RGW_PORT:-7480}
export LOCKSTEP_TEST_S3_ACCESS_KEY=RGWAK LOCKSTEP_TEST_S3_SECRET_KEY=RGWSECRET
export LOCKSTEP_TEST_COSIGN="$PWD/.cache/bin/cosign"

echo "== go test" >&2
go test -count=1 -timeout 15m "$@" ./...
