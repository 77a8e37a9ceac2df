#!/usr/bin/env bash
# Installs the release tools into .cache/bin from the Go module proxy, where
# they are missing or at another version: GoReleaser, ko and
# cyclonedx-gomod (the SBOMs). scripts/install-deps.sh and
# .github/workflows/release.yml call it. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

GORELEASER_VERSION=v2.15.1
KO_VERSION=v0.19.1
CYCLONEDX_GOMOD_VERSION=v1.10.0

mkdir -p .cache/bin
export GOBIN="$PWD/.cache/bin"
# The release tools, checked by the module version the binary was built from.
gotool() { # NAME MODULE VERSION [PACKAGE-IN-MODULE]
  if ! go version -m ".cache/bin/$1" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]]+$2[[:space:]]+$3([[:space:]]|$)"; then
    echo "install-release-tools: go install $2@$3" >&2
    (cd / && go install "$2${4:+/$4}@$3")
  fi
}
gotool goreleaser github.com/goreleaser/goreleaser/v2 "$GORELEASER_VERSION"
gotool ko github.com/google/ko "$KO_VERSION"
gotool cyclonedx-gomod github.com/CycloneDX/cyclonedx-gomod "$CYCLONEDX_GOMOD_VERSION" cmd/cyclonedx-gomod
