#!/usr/bin/env bash
# Builds the release in snapshot mode (goreleaser release --snapshot
# --clean, no publishing, no signing) into dist/: the archives, the .deb and
# .rpm packages, checksums.txt and the SBOMs. scripts/release_test.go checks
# what it produced.
#   scripts/release-snapshot.sh [--all] [--force]
# By default it builds the host's platform only (linux/amd64 here): the one
# whose binary, archive and packages the tests can run, about a quarter of
# the work. --all builds the whole matrix of .goreleaser.yaml (linux and
# darwin on amd64 and arm64), as a release does; the release workflow runs
# GoReleaser itself on a tag. dist/.targets names the platforms built.
#
# A snapshot is kept per machine, outside the clone, in
# $LOCKSTEP_CACHE/release/KEY (~/.cache/lockstep/release), where KEY is a
# SHA-256 over the targets, go.mod, go.sum, .goreleaser.yaml, the Go
# sources (not the tests: a *_test.go file is in no binary) and the
# packaged files: a second clone of the same sources (as CI's is) copies it
# instead of building it. --force rebuilds anyway. The newest few are kept.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.cache/bin:$PATH"
LOCKSTEP_CACHE=${LOCKSTEP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lockstep}

all= force=
for a in "$@"; do
  case "$a" in
  --all) all=1 ;;
  --force) force=1 ;;
  *) echo "usage: release-snapshot.sh [--all] [--force]" >&2; exit 2 ;;
  esac
done

if [ -n "$all" ]; then
  targets="darwin/amd64 darwin/arm64 linux/amd64 linux/arm64"
else
  targets="$(go env GOOS)/$(go env GOARCH)"
fi

inputs() {
  printf 'targets %s\n' "$targets"
  git ls-files -co --exclude-standard -- go.mod go.sum .goreleaser.yaml '*.go' ':(exclude)*_test.go' deploy/systemd deploy/packaging deploy/hooks docs/man scripts/package-docs.sh LICENSE README.md CHANGELOG.md |
    LC_ALL=C sort | while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done |
    xargs -d '\n' sha256sum
}
want=$(inputs | sha256sum | cut -d' ' -f1)
cached="$LOCKSTEP_CACHE/release/$want"

if [ -z "$force" ] && [ -f dist/.inputs ] && [ "$(cat dist/.inputs)" = "$want" ]; then
  echo "release-snapshot: dist/ is up to date ($targets)" >&2
  exit 0
fi
if [ -z "$force" ] && [ -f "$cached/.inputs" ]; then
  rm -rf dist
  cp -a "$cached" dist
  touch "$cached" # the newest are kept
  echo "release-snapshot: dist/ copied from $cached ($targets)" >&2
  exit 0
fi

for tool in goreleaser cyclonedx-gomod; do
  command -v "$tool" >/dev/null || { echo "release-snapshot: $tool is missing (scripts/install-release-tools.sh installs it)" >&2; exit 1; }
done

config=.goreleaser.yaml
if [ -z "$all" ]; then
  # The same configuration with the build's platforms narrowed to the host's.
  config=$(mktemp --suffix=.yaml)
  trap 'rm -f "$config"' EXIT
  goos=${targets%/*} goarch=${targets#*/}
  sed -e "s|^    goos: \[linux, darwin\]$|    goos: [$goos]|" -e "s|^    goarch: \[amd64, arm64\]$|    goarch: [$goarch]|" .goreleaser.yaml >"$config"
  if ! grep -qx "    goos: \[$goos\]" "$config" || ! grep -qx "    goarch: \[$goarch\]" "$config"; then
    echo "release-snapshot: .goreleaser.yaml's goos/goarch lines changed; update this script's narrowing" >&2
    exit 1
  fi
fi

echo "release-snapshot: goreleaser release --snapshot --clean for $targets (a few minutes)" >&2
rm -f dist/.inputs
# GoReleaser reads the commit from git, but gives up on all of it (stamping
# commit "none") when the checkout has no remote, as a fresh `git init` or
# a CI checkout without one: name the project's remote for this run only.
if [ -z "$(git remote)" ]; then
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/lockstep-dev/lockstep.git
fi
goreleaser release --config "$config" --snapshot --clean --skip=publish,sign --parallelism "${RELEASE_PARALLELISM:-2}" >&2
printf '%s\n' "$targets" >dist/.targets
printf '%s\n' "$want" >dist/.inputs

# Keep it for the machine's other clones: copied, then renamed into place.
mkdir -p "$LOCKSTEP_CACHE/release"
tmp=$(mktemp -d "$LOCKSTEP_CACHE/release/.tmp.XXXXXX")
cp -a dist/. "$tmp/"
rm -rf "$cached"
mv -T "$tmp" "$cached" 2>/dev/null || rm -rf "$tmp"
# The three newest snapshots stay; older ones go.
ls -1dt "$LOCKSTEP_CACHE"/release/*/ 2>/dev/null | tail -n +4 | xargs -r rm -rf
