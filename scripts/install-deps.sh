#!/usr/bin/env bash
# Installs what lockstep's tests need, where it is missing: Debian's
# docker-registry, nginx, wrk, hey, Ceph (radosgw), gcc (for go test
# -race), Chromium (the browser oracle: internal/browsertest), and containerd 1.6, runc and docker.io 20.10 (the container
# runtimes the running sources are tested against, started by
# scripts/runtimes.sh: the tests start daemons of their own and never use
# a system one), and, from the Go module proxy, the cosign CLI, staticcheck and
# crane (into .cache/bin). The release tools (goreleaser, ko, cyclonedx-gomod)
# come from scripts/install-release-tools.sh, which the release tests call.
# Idempotent: a second run installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

COSIGN_VERSION=v2.6.5
STATICCHECK_VERSION=v0.7.0
# crane v0.21 or later writes artifactType on index entries (the real-index tests).
CRANE_VERSION=v0.21.0

need=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }
have docker-registry || need+=(docker-registry)
have nginx || need+=(nginx-light)
have wrk || need+=(wrk)
have hey || need+=(hey)
have radosgw || need+=(ceph-mon ceph-osd radosgw)
have gcc || need+=(gcc libc6-dev) # go test -race needs cgo
have containerd || need+=(containerd)
have runc || need+=(runc)
have dockerd || need+=(docker.io)
# The browser oracle (internal/browsertest): Debian's Chromium, headless.
have chromium || need+=(chromium)
# The system's roots: bench/roots.sh (in bench/run.sh) loads them.
[ -e /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${need[*]}" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

mkdir -p .cache/bin
export GOBIN="$PWD/.cache/bin"
if [ ! -x .cache/bin/cosign ] || ! .cache/bin/cosign version 2>/dev/null | grep -q "${COSIGN_VERSION#v}"; then
  echo "install-deps: go install cosign@$COSIGN_VERSION (about 2 minutes cold)" >&2
  (cd / && go install "github.com/sigstore/cosign/v2/cmd/cosign@$COSIGN_VERSION")
fi
if [ ! -x .cache/bin/staticcheck ]; then
  echo "install-deps: go install staticcheck@$STATICCHECK_VERSION" >&2
  (cd / && go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION")
fi
if [ ! -x .cache/bin/crane ] || ! .cache/bin/crane version 2>/dev/null | grep -qx "$CRANE_VERSION"; then
  echo "install-deps: go install crane@$CRANE_VERSION" >&2
  (cd / && go install "github.com/google/go-containerregistry/cmd/crane@$CRANE_VERSION")
fi
