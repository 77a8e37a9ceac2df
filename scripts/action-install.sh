#!/usr/bin/env bash
# Installs lockstep for the GitHub Action (action.yml, scripts/action.sh)
# and prints the binary's path:
#   - version "local": builds this checkout (this repository's own tests);
#   - a release tag (v1.2.3): the released binary for the runner's OS and
#     architecture (RUNNER_OS, RUNNER_ARCH), downloaded and verified by
#     deploy/hooks/lockstep-install.sh (its SHA-256 against checksums.txt; with cosign on
#     the PATH, or verify-signature "true", checksums.txt's keyless
#     signature too), and kept in the runner's tool cache
#     ($RUNNER_TOOL_CACHE/lockstep/VERSION/ARCH) for the next step.
# Exits like deploy/hooks/lockstep-install.sh: 2 an unsupported runner or version, 1 a
# checksum or signature mismatch, 3 a failed download or build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${INPUT_VERSION:-}
tmp=${RUNNER_TEMP:-$(mktemp -d)}
repo=${LOCKSTEP_REPOSITORY:-lockstep-dev/lockstep}

# No version: the release of the action's own ref. uses: ...@v1.2.3 is
# release v1.2.3 (a pre-release tag, v1.2.3-rc.1, too); uses: ...@v1 (the
# major tag) is the newest v1.x.y release by version (never a pre-release),
# from GitHub's releases API; any other ref (a branch, a commit) must name a
# version.
if [ -z "$version" ]; then
  ref=${ACTION_REF:-}
  if [[ "$ref" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
    version=$ref
  elif [[ "$ref" =~ ^v[0-9]+$ ]]; then
    api=${LOCKSTEP_API_URL:-${GITHUB_API_URL:-https://api.github.com}}
    auth=()
    [ -n "${GITHUB_TOKEN:-}" ] && auth=(-H "Authorization: Bearer $GITHUB_TOKEN")
    # The newest by version, not by the API's order; pre-releases
    # (v1.2.3-rc.1) never match.
    list=$(curl -fsSL --retry 5 --max-time 60 "${auth[@]}" "$api/repos/$repo/releases?per_page=100") ||
      { echo "lockstep install: the releases of $repo could not be listed from $api" >&2; exit 3; }
    version=$(printf '%s\n' "$list" | grep -oE '"tag_name": *"'"$ref"'\.[0-9]+\.[0-9]+"' |
      grep -oE 'v[0-9.]+' | sort -V | tail -n1) || true
    [ -n "$version" ] || { echo "lockstep install: no $ref.x.y release of $repo found" >&2; exit 3; }
    echo "lockstep install: @$ref is release $version, the newest $ref.x.y" >&2
  else
    echo "lockstep install: the action's ref ${ref:-(unknown)} is not a release tag: set the version input (v1.2.3)" >&2
    exit 2
  fi
fi

if [ "$version" = local ]; then
  src=${GITHUB_ACTION_PATH:-$(dirname "$here")}
  mkdir -p "$tmp/lockstep-bin"
  (cd "$src" && go build -trimpath -o "$tmp/lockstep-bin/lockstep" ./cmd/lockstep) >&2 ||
    { echo "lockstep install: go build of lockstep in $src failed" >&2; exit 3; }
  echo "$tmp/lockstep-bin/lockstep"
  exit 0
fi

case "${RUNNER_OS:-$(uname -s)}" in
Linux) os=linux ;;
macOS | Darwin) os=darwin ;;
*) echo "lockstep install: runner OS ${RUNNER_OS:-$(uname -s)} has no lockstep release (linux and macOS do)" >&2; exit 2 ;;
esac
case "${RUNNER_ARCH:-$(uname -m)}" in
X64 | x86_64) arch=amd64 ;;
ARM64 | arm64 | aarch64) arch=arm64 ;;
*) echo "lockstep install: runner architecture ${RUNNER_ARCH:-$(uname -m)} has no lockstep release (X64 and ARM64 do)" >&2; exit 2 ;;
esac
case "${INPUT_VERIFY_SIGNATURE:-auto}" in
true) sig=1 ;;
false) sig=0 ;;
auto) if command -v cosign >/dev/null 2>&1; then sig=1; else sig=0; fi ;;
*) echo "lockstep install: verify-signature ${INPUT_VERIFY_SIGNATURE}: want auto, true or false" >&2; exit 2 ;;
esac

# The tool cache's layout (@actions/tool-cache): TOOL/VERSION/ARCH, and
# ARCH.complete once it is whole.
cache="${RUNNER_TOOL_CACHE:-$tmp/tool-cache}/lockstep/${version#v}/$arch"
if [ -x "$cache/lockstep" ] && [ -f "$cache.complete" ]; then
  echo "lockstep install: $version $os/$arch from the tool cache ($cache)" >&2
else
  rm -f "$cache.complete"
  LOCKSTEP_OS=$os LOCKSTEP_ARCH=$arch LOCKSTEP_VERIFY_SIGNATURE=$sig \
    LOCKSTEP_RELEASE_URL=${INPUT_DOWNLOAD_URL:-${LOCKSTEP_RELEASE_URL:-}} \
    "$(dirname "$here")/deploy/hooks/lockstep-install.sh" "$version" "$cache" || exit
  touch "$cache.complete"
fi
echo "$cache/lockstep"
