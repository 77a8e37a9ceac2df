#!/usr/bin/env bash
# Lays out ko's data directory for lockstep's image: cmd/lockstep/kodata,
# which ko puts at /var/run/ko. It holds the units as the release archive
# does: systemd/ is deploy/systemd whole (every unit and the drop-in that
# makes the ingress wait for the gate) and systemd/admit.env. Generated (and
# ignored by git), never edited: deploy/systemd is the one source. ko does
# not follow a link out of kodata, hence a copy. The release workflow and
# scripts/image_test.go run it before `ko build`.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf cmd/lockstep/kodata
mkdir -p cmd/lockstep/kodata
cp -R deploy/systemd cmd/lockstep/kodata/systemd
cp deploy/packaging/admit.env cmd/lockstep/kodata/systemd/admit.env
