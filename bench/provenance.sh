#!/usr/bin/env bash
# bench/provenance.sh: what `admit --require-provenance` adds to a boot,
# one embedded SLSA provenance attestation verified and checked against the
# manifest's digest and source (provenance.Verifier.VerifyEmbedded),
# against its anchor, the embedded cosign signature of the same image
# (imagesig.Verifier.VerifyEmbedded, no cache), in ROUNDS interleaved
# rounds; microseconds per image.
#
#   bench/provenance.sh       ROUNDS=5 BENCHTIME=1s
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bin=$(mktemp -d)/provenance.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" ./verify/provenance/
for _ in $(seq "${ROUNDS:-5}"); do
	gobench "$bin" provenance lockstep BenchmarkVerifyEmbeddedProvenance 1 "per image"
	gobench "$bin" provenance anchor BenchmarkVerifyEmbeddedSignature 1 "per image"
done
