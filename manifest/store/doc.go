// Package store is what lockstep does with a manifest.Store, whichever the
// backend (manifest/filestore, manifest/s3store): Publish a manifest and
// move a channel to it, read a channel's Status, Rollback to an earlier
// release as a new, higher generation, GC old manifests without ever
// taking a live one, take the NextGeneration for a release, and read the
// manifest a channel names as a manifest.Source (ChannelSource).
//
// The rules it keeps, with the backends' compare-and-swap:
//   - a channel moves only to a strictly higher generation
//     (manifest.NextPointer, in every backend's Move);
//   - gc never deletes a manifest that a channel names, one of the newest N
//     by generation, one a fleet report says is running, nor one whose
//     generation is not below every channel's current generation. Since a
//     channel only rises, a manifest below all of them can never be named
//     again; so a publish racing gc can never be left pointing at a deleted
//     manifest. The channels are re-read immediately before each delete.
package store
