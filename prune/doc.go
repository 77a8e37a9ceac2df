// Package prune is skew protection for a CDN's origin: Run deletes from
// the origin only the objects that no kept generation of a release lists,
// so that an instance still serving an older generation never references
// an asset that is gone (the mirror image of the outage lockstep exists
// for). A generation is kept by manifest/store's GC rules (Retain): the
// newest Keep, every one a channel names or could still move to, and every
// one a fleet report shows running; and, with OlderThan, every one created
// within it.
//
// The origin is an Origin: a directory (Dir) or an S3 bucket and prefix
// (package prune/s3origin). Run is a dry run unless Options.Delete; before
// each delete it re-reads the store's manifests and channels, as GC does,
// and the object itself, so that a concurrent publish or upload is never
// undone. It fails closed: an unreadable manifest, store, origin or report
// stops it before anything is deleted, and an object that no manifest
// lists (an upload whose manifest is not stored yet, or an asset of a
// generation gc already deleted) is kept unless Options.PruneUnknown.
package prune
