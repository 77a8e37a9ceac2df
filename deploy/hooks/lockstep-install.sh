#!/bin/sh
# Installs a released lockstep binary for this machine's OS and
# architecture, verified before anything runs it:
#   lockstep-install.sh VERSION DIR
# downloads checksums.txt and lockstep_<version>_<os>_<arch>.tar.gz of the
# release VERSION (v1.2.3) from $LOCKSTEP_RELEASE_URL (default GitHub's
# releases/download; https only, unless LOCKSTEP_ALLOW_HTTP=1), checks
# checksums.txt against $LOCKSTEP_CHECKSUMS_SHA256 when it is set (pin it: a
# download from a compromised server is then refused too), checks the
# archive's SHA-256 against checksums.txt, and only then puts DIR/lockstep in
# place (atomically, by rename).
# With cosign on the PATH and LOCKSTEP_VERIFY_SIGNATURE=1 it also verifies
# checksums.txt's keyless signature (checksums.txt.sigstore.json) as made by
# the release workflow of $LOCKSTEP_REPOSITORY (lockstep-dev/lockstep).
# Its last line says which of these it verified: without a signature or a
# pin, only that the archive matches the checksums.txt it downloaded.
# LOCKSTEP_CACHED_ARCHIVE=FILE verifies that archive instead of downloading
# one (checksums.txt is still fetched and verified); LOCKSTEP_KEEP_ARCHIVE=1
# leaves the verified archive in DIR beside the binary.
# Exit 0 installed; 2 unsupported OS, architecture, version or URL; 1 a
# checksum or signature mismatch; 3 a download failed. Nothing is left in
# DIR on failure.
set -eu
version=${1:?usage: lockstep-install.sh VERSION DIR}
dir=${2:?usage: lockstep-install.sh VERSION DIR}
base=${LOCKSTEP_RELEASE_URL:-https://github.com/lockstep-dev/lockstep/releases/download}
repo=${LOCKSTEP_REPOSITORY:-lockstep-dev/lockstep}

os=${LOCKSTEP_OS:-$(uname -s)}
arch=${LOCKSTEP_ARCH:-$(uname -m)}
case "$os" in
Linux | linux) os=linux ;;
Darwin | darwin | macOS) os=darwin ;;
*) echo "lockstep install: unsupported OS $os (releases are built for linux and darwin)" >&2; exit 2 ;;
esac
case "$arch" in
x86_64 | amd64 | X64) arch=amd64 ;;
aarch64 | arm64 | ARM64) arch=arm64 ;;
*) echo "lockstep install: unsupported architecture $arch (releases are built for amd64 and arm64)" >&2; exit 2 ;;
esac
# A version, before it reaches a path or a URL: vMAJOR.MINOR.PATCH with an
# optional semver pre-release, nothing else (no /, no .., no newline).
case "$version" in
*[!0-9A-Za-z.-]* | *..* | *.-* | *-. | *.) bad=1 ;;
*) bad=0 ;;
esac
if [ "$bad" = 1 ] || ! printf '%s\n' "$version" | grep -Eqx 'v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?'; then
	echo "lockstep install: version $version: want a release tag such as v1.2.3" >&2
	exit 2
fi
proto='=https'
case "$base" in
https://?*) ;;
http://?*)
	[ "${LOCKSTEP_ALLOW_HTTP:-0}" = 1 ] || {
		echo "lockstep install: $base is plain http: anyone on the path can change what it serves (LOCKSTEP_ALLOW_HTTP=1 allows it)" >&2
		exit 2
	}
	proto='=https,http'
	;;
*) echo "lockstep install: release URL $base: want https://" >&2; exit 2 ;;
esac
archive="lockstep_${version#v}_${os}_${arch}.tar.gz"

sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1; }
fetch() { # URL FILE
	if command -v curl >/dev/null 2>&1; then
		curl -fsSL --proto "$proto" --proto-redir "$proto" --retry 5 --retry-connrefused --max-time 120 -o "$2" "$1"
	else
		wget -q -T 120 -t 5 -O "$2" "$1"
	fi || { echo "lockstep install: downloading $1 failed" >&2; exit 3; }
}

mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.lockstep-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fetch "$base/$version/checksums.txt" "$tmp/checksums.txt"
if [ -n "${LOCKSTEP_CHECKSUMS_SHA256:-}" ]; then
	got=$(sha256 "$tmp/checksums.txt")
	[ "$got" = "$LOCKSTEP_CHECKSUMS_SHA256" ] || {
		echo "lockstep install: checksums.txt of $version has SHA-256 $got, want $LOCKSTEP_CHECKSUMS_SHA256" >&2
		exit 1
	}
fi
if [ "${LOCKSTEP_VERIFY_SIGNATURE:-0}" = 1 ]; then
	command -v cosign >/dev/null 2>&1 || { echo "lockstep install: LOCKSTEP_VERIFY_SIGNATURE=1 needs cosign" >&2; exit 2; }
	fetch "$base/$version/checksums.txt.sigstore.json" "$tmp/checksums.txt.sigstore.json"
	cosign verify-blob --bundle "$tmp/checksums.txt.sigstore.json" \
		--certificate-identity "https://github.com/$repo/.github/workflows/release.yml@refs/tags/$version" \
		--certificate-oidc-issuer https://token.actions.githubusercontent.com "$tmp/checksums.txt" >&2 || {
		echo "lockstep install: the signature of checksums.txt of $version does not verify" >&2
		exit 1
	}
fi
want=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$tmp/checksums.txt")
[ -n "$want" ] || { echo "lockstep install: checksums.txt of $version names no $archive" >&2; exit 1; }
if [ -n "${LOCKSTEP_CACHED_ARCHIVE:-}" ]; then
	cp "$LOCKSTEP_CACHED_ARCHIVE" "$tmp/$archive"
else
	fetch "$base/$version/$archive" "$tmp/$archive"
fi
got=$(sha256 "$tmp/$archive")
[ "$got" = "$want" ] || { echo "lockstep install: ${LOCKSTEP_CACHED_ARCHIVE:-$archive} has SHA-256 $got, want $want (checksums.txt)" >&2; exit 1; }
tar -xzf "$tmp/$archive" -C "$tmp" lockstep
chmod 0755 "$tmp/lockstep"
[ "${LOCKSTEP_KEEP_ARCHIVE:-0}" = 1 ] && mv -f "$tmp/$archive" "$dir/$archive"
mv -f "$tmp/lockstep" "$dir/lockstep"
if [ "${LOCKSTEP_VERIFY_SIGNATURE:-0}" = 1 ]; then
	how="checksums.txt's signature verified (the release workflow of $repo), $archive matches it (sha256:$got)"
elif [ -n "${LOCKSTEP_CHECKSUMS_SHA256:-}" ]; then
	how="checksums.txt matches its pin, $archive matches it (sha256:$got)"
else
	how="$archive matches checksums.txt (sha256:$got); NO signature verified: both came from $base, unauthenticated"
fi
echo "lockstep install: $version $os/$arch into $dir/lockstep: $how" >&2
