// Package filestore is a manifest.Store in a directory: the embedded
// default, enough for one machine and for the demo. Its layout, per release:
//
//	DIR/RELEASE/manifests/sha256:HEX.json    the manifest, the bytes as published
//	DIR/RELEASE/manifests/sha256:HEX.sig     its signature, when it has one
//	DIR/RELEASE/manifests/sha256:HEX.sigstore.json  its Sigstore bundle, when it has one
//	DIR/RELEASE/channels/CHANNEL.json        a channel's pointer document
//	DIR/RELEASE/.lock                        the lock the channel moves take
//
// Every write is atomic (internal/atomicfile: a temporary file, fsync,
// rename). A channel move is a compare-and-swap under an exclusive flock(2)
// on the release's lock file, safe across processes on one host (not over
// NFS): the pointer is re-read under the lock and manifest.NextPointer
// decides. Delete takes the same lock.
package filestore
