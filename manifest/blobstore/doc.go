// Package blobstore is the write algorithm of the manifest stores that keep
// a manifest and its sidecars (signature, bundle) as named blobs: the
// directory store (manifest/filestore) and the S3 store (manifest/s3store).
// Each store implements Blobs, a few methods over its medium; Put, Delete,
// List and Channels are written once, here.
//
// A manifest is written once and never rewritten: Put creates it only if
// it is absent (first writer wins), then writes its sidecars; a manifest
// that is there already keeps its bytes, and only gains the sidecars it
// lacks. A channel moves only after Put returns, so a consumer following
// it never sees a manifest without its sidecars.
package blobstore
