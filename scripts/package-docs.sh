#!/usr/bin/env bash
# GoReleaser's before hook (.goreleaser.yaml): the files the .deb and .rpm
# ship compressed, as Debian and Fedora expect (lintian, rpmlint), into
# .cache/package/: the man pages (docs/man/*.1 → man1/*.1.gz) and the
# changelog (CHANGELOG.md → changelog.gz); and the packages' own changelog
# entry (changelog.yml, nfpm's chglog format: the rpm's %changelog), for
# VERSION at DATE (the commit's, so that builds reproduce).
# gzip -n: no name or time in the header, so the same sources make the
# same bytes.
#   scripts/package-docs.sh [VERSION [DATE]]
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-0.0.0-dev}
date=${2:-1970-01-01T00:00:00Z}
out=.cache/package
rm -rf "$out"
mkdir -p "$out/man1"
for f in docs/man/*.1; do
  gzip -n -9 -c "$f" >"$out/man1/$(basename "$f").gz"
done
gzip -n -9 -c CHANGELOG.md >"$out/changelog.gz"
cat >"$out/changelog.yml" <<YAML
- semver: $version
  date: $date
  packager: lockstep-dev <security@lockstep.dev>
  changes:
    - note: "lockstep $version; its changes: /usr/share/doc/lockstep/changelog.gz, https://github.com/lockstep-dev/lockstep/blob/main/CHANGELOG.md"
YAML
