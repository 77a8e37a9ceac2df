#!/usr/bin/env bash
# Benchmarks the manifest stores: publish (store + move), fetch (what a
# booting consumer reads) and contended publish (4 parallel publishers
# racing the compare-and-swap), on the directory store, on gofakes3 in
# process, and on a real radosgw when LOCKSTEP_TEST_S3_ENDPOINT is set
# (scripts/radosgw.sh start DIR; see scripts/test.sh for the variables).
#   bench/store.sh [-benchtime 2s]
set -euo pipefail
cd "$(dirname "$0")/.."
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
go test -run '^$' -bench . -benchmem "${@:--benchtime=1s}" ./manifest/filestore ./manifest/s3store
