#!/usr/bin/env bash
# Signature benchmarks: image-signature verification per digest against a
# real docker-registry on loopback (cold, warm from the digest-keyed
# cache, from embedded material), the cosign CLI per verification for
# comparison, and manifest-signature verification by manifest size.
# Reports ns/op and p50/p99 in µs. Usage: bench/signature.sh [-benchtime=2s]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.cache/bin:$PATH"
export LOCKSTEP_TEST_COSIGN=${LOCKSTEP_TEST_COSIGN:-$PWD/.cache/bin/cosign}
echo "== $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
go test -run '^$' -bench 'ImageSignature|ManifestSignature' -benchtime "${BENCHTIME:-2s}" "$@" ./bench/signature/
go test -run '^$' -bench 'CosignCLI' -benchtime 20x "$@" ./bench/signature/
