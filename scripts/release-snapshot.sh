#!/usr/bin/env bash
# Builds the release in snapshot mode (goreleaser release --snapshot
# --clean, no publishing, no signing) into dist/: every archive, the .deb
# and .rpm packages, checksums.txt and the SBOMs. scripts/release_test.go
# checks what it produced.
#
# Slow (eight links and the packages), so it runs only when its inputs
# changed: dist/.inputs holds a SHA-256 over go.mod, go.sum,
# .goreleaser.yaml, the Go sources (not the tests: a *_test.go file is in
# no binary) and the packaged files, and a run whose inputs match it does
# nothing. --force rebuilds anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.cache/bin:$PATH"

inputs() {
  git ls-files -co --exclude-standard -- go.mod go.sum .goreleaser.yaml '*.go' ':(exclude)*_test.go' deploy/systemd deploy/packaging docs/man LICENSE README.md CHANGELOG.md |
    LC_ALL=C sort | while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done |
    xargs -d '\n' sha256sum | sha256sum | cut -d' ' -f1
}

want=$(inputs)
if [ "${1:-}" != --force ] && [ -f dist/.inputs ] && [ "$(cat dist/.inputs)" = "$want" ]; then
  echo "release-snapshot: dist/ is up to date" >&2
  exit 0
fi
for tool in goreleaser cyclonedx-gomod; do
  command -v "$tool" >/dev/null || { echo "release-snapshot: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
echo "release-snapshot: goreleaser release --snapshot --clean (a few minutes)" >&2
rm -f dist/.inputs
# GoReleaser reads the commit from git, but gives up on all of it (stamping
# commit "none") when the checkout has no remote, as a fresh `git init` or
# a CI checkout without one: name the project's remote for this run only.
if [ -z "$(git remote)" ]; then
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/lockstep-dev/lockstep.git
fi
goreleaser release --snapshot --clean --skip=publish,sign --parallelism "${RELEASE_PARALLELISM:-2}" >&2
printf '%s\n' "$want" >dist/.inputs
