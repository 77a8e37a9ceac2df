#!/usr/bin/env bash
# Installs lockstep for the GitHub Action (action.yml, scripts/action.sh)
# and prints the binary's path:
#   - version "local": builds this checkout (this repository's own tests);
#   - a release (v1.2.3), a major version (v1: the newest v1.x.y) or
#     "latest" (the newest release): the released binary for the runner's
#     OS and architecture (RUNNER_OS, RUNNER_ARCH), downloaded and verified
#     by deploy/hooks/lockstep-install.sh (its SHA-256 against
#     checksums.txt; with cosign on the PATH, or verify-signature "true",
#     checksums.txt's keyless signature too), and kept in the runner's tool
#     cache ($RUNNER_TOOL_CACHE/lockstep/VERSION/ARCH, with the archive it
#     came from) for the next step.
# What it installs is only what it verified:
#   - a major version or "latest" resolves to a published release: never a
#     draft, never a pre-release (GitHub's releases API, read with jq);
#   - the version is checked as a version (vMAJOR.MINOR.PATCH, optionally
#     -PRERELEASE) before it reaches a path or a URL;
#   - a tool-cache hit is verified again (checksums.txt fetched afresh and,
#     where it can be, its signature; the cached archive against it; the
#     cached binary against the archive) and a copy that fails is removed
#     and refused (exit 1);
#   - with no signature verified, it says so (a ::warning annotation in
#     $ACTION_ANNOTATIONS, which action.sh prints), never "verified";
#   - a plain-http download-url (or API URL) is refused unless
#     allow-http-download is "true";
#   - the workflow's token (GITHUB_TOKEN) goes only to the GitHub API it
#     belongs to, $GITHUB_API_URL (default https://api.github.com), never to
#     a URL that LOCKSTEP_API_URL or an input names;
#   - a refused install leaves nothing in the tool cache.
# Exits like deploy/hooks/lockstep-install.sh: 2 an unsupported runner or an
# invalid input, 1 a checksum or signature mismatch (or a tampered cache),
# 3 a failed download, listing or build (or version local with no Go).
# With ACTION_INSTALLED_VERSION set, the version installed (v1.2.3, or
# local) is written to that file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${INPUT_VERSION:-}
tmp=${RUNNER_TEMP:-$(mktemp -d)}
repo=${LOCKSTEP_REPOSITORY:-lockstep-dev/lockstep}

die() { # CODE MESSAGE
  echo "lockstep install: $2" >&2
  exit "$1"
}
note() { # LEVEL MESSAGE: an annotation for action.sh to print
  [ -n "${ACTION_ANNOTATIONS:-}" ] && printf '::%s title=lockstep install::%s\n' "$1" "$2" >>"$ACTION_ANNOTATIONS"
  return 0
}

# vMAJOR.MINOR.PATCH with an optional semver pre-release: no leading zeros,
# no build metadata, nothing a path or a URL could read as more than a name.
semver='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$'
major='^v(0|[1-9][0-9]*)$'

case "${INPUT_ALLOW_HTTP_DOWNLOAD:-false}" in
true) allow_http=1 ;;
false) allow_http=0 ;;
*) die 2 "allow-http-download ${INPUT_ALLOW_HTTP_DOWNLOAD}: want true or false" ;;
esac
checkurl() { # WHAT URL: an http(s) URL, https unless allowed
  case "$2" in
  https://?*) ;;
  http://?*) [ "$allow_http" = 1 ] || die 2 "$1 $2 is plain http: a download that anyone on the path can change (set allow-http-download: true for a trusted mirror)" ;;
  *) die 2 "$1 $2: want an https:// URL" ;;
  esac
  [[ "$2" =~ ^[!-~]+$ ]] || die 2 "$1 $2: a URL has no spaces or control characters"
}

# No version: the release of the action's own ref. uses: ...@v1.2.3 is
# release v1.2.3 (a pre-release tag, v1.2.3-rc.1, too); uses: ...@v1 (the
# major tag) is the newest published v1.x.y; any other ref (a branch, a
# commit) must name a version.
if [ -z "$version" ]; then
  ref=${ACTION_REF:-}
  if [[ "$ref" =~ $semver || "$ref" =~ $major ]]; then
    version=$ref
  else
    die 2 "the action's ref ${ref:-(unknown)} is not a release tag: set the version input (v1.2.3)"
  fi
fi

# A major version or latest: the newest published release by version, from
# the releases API. Drafts and pre-releases (by the API's flags, whatever
# their tag) never match, nor does a tag that is not a plain version.
if [[ "$version" =~ $major || "$version" = latest ]]; then
  command -v jq >/dev/null 2>&1 || die 3 "resolving $version needs jq on the PATH (or set the version input to a release, v1.2.3)"
  gh_api=${GITHUB_API_URL:-https://api.github.com}
  api=${LOCKSTEP_API_URL:-$gh_api}
  checkurl "the releases API" "$api"
  auth=()
  # The token belongs to GitHub's API for this run: never to another host.
  if [ -n "${GITHUB_TOKEN:-}" ] && [ "$api" = "$gh_api" ]; then
    auth=(-H "Authorization: Bearer $GITHUB_TOKEN")
  fi
  proto='=https'
  [ "$allow_http" = 1 ] && proto='=https,http'
  # Every page of the list (100 a page, newest first): a repository with
  # more than 100 releases, pre-releases and drafts counted, still has its
  # newest published vN found. At most 20 pages; a list longer than that
  # is refused rather than read in part.
  list='[]'
  for page in $(seq 1 21); do
    [ "$page" -le 20 ] || die 3 "the releases of $repo at $api run past 2000: set the version input to a release (v1.2.3)"
    one=$(curl -fsSL --proto "$proto" --proto-redir "$proto" --retry 5 --max-time 60 "${auth[@]}" \
      "$api/repos/$repo/releases?per_page=100&page=$page") ||
      die 3 "the releases of $repo could not be listed from $api"
    n=$(printf '%s\n' "$one" | jq -r 'if type == "array" then length else error("not a list") end' 2>/dev/null) ||
      die 3 "the releases API at $api answered something that is not a list of releases"
    list=$(jq -cn --argjson a "$list" --argjson b "$one" '$a + $b')
    [ "$n" -ge 100 ] || break
  done
  want='^v[0-9]+\.[0-9]+\.[0-9]+$'
  [ "$version" = latest ] || want="^${version}\\.[0-9]+\\.[0-9]+\$"
  resolved=$(printf '%s\n' "$list" | jq -r --arg want "$want" \
    '.[] | select(.draft == false and .prerelease == false) | .tag_name | select(type == "string" and test($want))' 2>/dev/null |
    sort -V | tail -n1) || die 3 "the releases API at $api answered something that is not a list of releases"
  label=$version.x.y
  [ "$version" = latest ] && label=""
  [ -n "$resolved" ] || die 3 "no published ${label:+$label }release of $repo found at $api (drafts and pre-releases are never installed)"
  echo "lockstep install: $version is release $resolved, the newest published one" >&2
  version=$resolved
fi

installed() { # PATH: the binary installed, and (for action.sh) its version
  [ -z "${ACTION_INSTALLED_VERSION:-}" ] || printf '%s\n' "$version" >"$ACTION_INSTALLED_VERSION"
  echo "$1"
}

if [ "$version" = local ]; then
  src=${GITHUB_ACTION_PATH:-$(dirname "$here")}
  # No actions/setup-go inside the Action: a composite action's every
  # uses: is fetched when the job is set up, whatever its if: says, which
  # fails on runners that allow only selected actions or cannot reach
  # GitHub. The job brings Go itself.
  command -v go >/dev/null 2>&1 ||
    die 3 "version: local builds lockstep from the action's checkout with Go 1.26, and go is not on the PATH: add actions/setup-go (go-version: \"1.26\") before this step, or set version to a release (v1.2.3)"
  mkdir -p "$tmp/lockstep-bin"
  (cd "$src" && go build -trimpath -o "$tmp/lockstep-bin/lockstep" ./cmd/lockstep) >&2 ||
    die 3 "go build of lockstep in $src failed"
  installed "$tmp/lockstep-bin/lockstep"
  exit 0
fi
[[ "$version" =~ $semver ]] || die 2 "version ${version}: want a release (v1.2.3), a major version (v1), latest or local"

case "${RUNNER_OS:-$(uname -s)}" in
Linux) os=linux ;;
macOS | Darwin) os=darwin ;;
*) die 2 "runner OS ${RUNNER_OS:-$(uname -s)} has no lockstep release (linux and macOS do)" ;;
esac
case "${RUNNER_ARCH:-$(uname -m)}" in
X64 | x86_64) arch=amd64 ;;
ARM64 | arm64 | aarch64) arch=arm64 ;;
*) die 2 "runner architecture ${RUNNER_ARCH:-$(uname -m)} has no lockstep release (X64 and ARM64 do)" ;;
esac
case "${INPUT_VERIFY_SIGNATURE:-auto}" in
true) sig=1 ;;
false) sig=0 ;;
auto) if command -v cosign >/dev/null 2>&1; then sig=1; else sig=0; fi ;;
*) die 2 "verify-signature ${INPUT_VERIFY_SIGNATURE}: want auto, true or false" ;;
esac
url=${INPUT_DOWNLOAD_URL:-${LOCKSTEP_RELEASE_URL:-https://github.com/$repo/releases/download}}
checkurl download-url "$url"

# The tool cache's layout (@actions/tool-cache): TOOL/VERSION/ARCH, and
# ARCH.complete once it is whole. Everything is verified in a staging
# directory and moved in only once it passed; the cached archive lets a
# later step verify its copy again without downloading it.
toolcache=${RUNNER_TOOL_CACHE:-$tmp/tool-cache}
cache="$toolcache/lockstep/${version#v}/$arch"
archive="lockstep_${version#v}_${os}_${arch}.tar.gz"
mkdir -p "$tmp"
stage=$(mktemp -d "$tmp/lockstep-install.XXXXXX")
trap 'rm -rf "$stage"' EXIT
hit=0
if [ -f "$cache.complete" ] && [ -f "$cache/$archive" ] && [ -f "$cache/lockstep" ]; then
  hit=1
fi
export LOCKSTEP_OS=$os LOCKSTEP_ARCH=$arch LOCKSTEP_VERIFY_SIGNATURE=$sig LOCKSTEP_RELEASE_URL=$url \
  LOCKSTEP_ALLOW_HTTP=$allow_http LOCKSTEP_KEEP_ARCHIVE=1
forget() { # a cached copy that does not verify: nobody may use it
  rm -rf "$cache" "$cache.complete"
  rmdir "$(dirname "$cache")" "$toolcache/lockstep" 2>/dev/null || true
}
if [ "$hit" = 1 ]; then
  rc=0
  LOCKSTEP_CACHED_ARCHIVE="$cache/$archive" "$(dirname "$here")/deploy/hooks/lockstep-install.sh" "$version" "$stage" || rc=$?
  if [ "$rc" = 1 ]; then
    forget
    note error "the tool cache's copy of lockstep $version ($cache) does not match the release: removed; something on this runner changed it"
    die 1 "the tool cache's copy of $version ($cache) does not verify: removed, not used"
  fi
  [ "$rc" = 0 ] || exit "$rc"
  if ! cmp -s "$stage/lockstep" "$cache/lockstep"; then
    forget
    note error "the tool cache's lockstep binary for $version ($cache/lockstep) is not the one in the verified archive: removed; something on this runner changed it"
    die 1 "the tool cache's binary for $version ($cache/lockstep) differs from the verified archive's: removed, not used"
  fi
  echo "lockstep install: $version $os/$arch from the tool cache ($cache), verified again" >&2
else
  "$(dirname "$here")/deploy/hooks/lockstep-install.sh" "$version" "$stage" || exit
  rm -rf "$cache" "$cache.complete"
  mkdir -p "$(dirname "$cache")"
  mv "$stage" "$cache"
  touch "$cache.complete"
fi
if [ "$sig" = 0 ] && [ -z "${LOCKSTEP_CHECKSUMS_SHA256:-}" ]; then
  note warning "lockstep $version: checksums.txt's signature was NOT verified (verify-signature: ${INPUT_VERIFY_SIGNATURE:-auto}, and cosign was not used): the archive matches checksums.txt from $url, which proves only that the two came from the same place. Add sigstore/cosign-installer before this step, or set verify-signature: true."
fi
installed "$cache/lockstep"
