// Package assets hashes the static files a release serves: it walks an
// asset directory (or reads the asset set from a Vite or webpack manifest)
// and returns every file as a [manifest.File], sorted by path, with its
// size, SHA-256 and content type.
//
// Nothing is skipped silently. A symlink is followed only while it stays
// inside the directory; one that leaves it, a broken symlink, a symlink
// cycle, a device, socket or named pipe, and a path that
// [manifest.ValidatePath] refuses are errors of type [*Error] naming the
// file. Hidden files and directories (a name starting with ".") are hashed
// like any other, because a CDN upload of the directory serves them too;
// leave them out with [Options.Exclude], and every excluded path is
// counted in [Result.Excluded] and logged.
//
// Hashing runs on a bounded pool of workers, one per CPU by default, each
// reading with a large buffer; the result does not depend on the number of
// workers.
package assets
