// Package s3store is a manifest.Store in an S3 bucket (s3://BUCKET/PREFIX),
// on aws-sdk-go-v2, for AWS S3 and S3-compatible servers (Ceph radosgw).
// Its layout under PREFIX is filestore's:
//
//	PREFIX/RELEASE/manifests/sha256:HEX.json    the manifest, the bytes as published
//	PREFIX/RELEASE/manifests/sha256:HEX.sig     its signature, when it has one
//	PREFIX/RELEASE/manifests/sha256:HEX.sigstore.json  its Sigstore bundle, when it has one
//	PREFIX/RELEASE/channels/CHANNEL.json        a channel's pointer document
//
// Manifests are written with If-None-Match: * so that a digest is never
// rewritten (a 412 means it is there already: its bytes are checked). A
// channel moves by compare-and-swap: If-Match with the ETag the pointer was
// read with, or If-None-Match: * to create it. A 412 or 409 re-reads the
// pointer and manifest.NextPointer decides again; never a blind retry, and
// at most MaxMoveAttempts times.
//
// ETags in If-Match are sent unquoted. AWS S3 accepts an ETag quoted (as
// it returns it) or not; Ceph radosgw (16.x) accepts only the unquoted
// form and answers 412 to the quoted one even when it matches. The unquoted
// form is right on both; the contract tests run against both.
//
// The S3 client is behind the small API interface: only cmd/ builds the
// real one (config.LoadDefaultConfig, with internal/transport's Transport
// and Retryer's policy).
package s3store
