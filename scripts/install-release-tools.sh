#!/usr/bin/env bash
# Installs the release tools from the Go module proxy, once per machine
# (scripts/lib/tools.sh: ~/.cache/lockstep/tools, linked into .cache/bin),
# where they are missing or at another version: GoReleaser, ko,
# cyclonedx-gomod (the SBOMs) and helm (the chart, at the version the tests
# use: scripts/lib/tools.sh). scripts/test.sh and
# .github/workflows/release.yml call it. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/tools.sh

GORELEASER_VERSION=v2.15.1
KO_VERSION=v0.19.1
CYCLONEDX_GOMOD_VERSION=v1.10.0

gotool goreleaser github.com/goreleaser/goreleaser/v2 "$GORELEASER_VERSION"
gotool ko github.com/google/ko "$KO_VERSION"
gotool cyclonedx-gomod github.com/CycloneDX/cyclonedx-gomod "$CYCLONEDX_GOMOD_VERSION" cmd/cyclonedx-gomod
gotool helm helm.sh/helm/v4 "$HELM_VERSION" cmd/helm
