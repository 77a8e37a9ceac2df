// Package signature holds the signature benchmarks (bench/signature.sh
// runs them): image-signature verification per digest against a real
// local docker-registry, cold and warm (the digest-keyed cache), from
// embedded material, the cosign CLI for comparison, and the latency that
// manifest-signature verification adds to the boot gate.
package signature
