package prune

import (
	"context"
	"errors"
	"time"
)

// Object is one object of an origin, as its listing shows it.
type Object struct {
	// Key is the object's path relative to the origin's root, with forward
	// slashes: an asset's manifest path.
	Key     string    `json:"key"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"modTime"`
	// Tag identifies the object's version where the origin has one (an S3
	// ETag); Delete uses it to delete only what was listed.
	Tag string `json:"-"`
	// Irregular is set for a directory entry that is not a regular file (a
	// symbolic link, a FIFO, ...): it is never deleted.
	Irregular bool `json:"-"`
}

// Origin is where a CDN fetches its assets from: a directory (Dir) or an
// S3 prefix (prune/s3origin).
type Origin interface {
	// List returns every object under the origin's root.
	List(ctx context.Context) ([]Object, error)
	// Delete removes o, only if it is still what List returned (same size
	// and modification time, or same Tag): otherwise ErrChanged. An object
	// that is gone already is not an error.
	Delete(ctx context.Context, o Object) error
}

// ErrChanged is returned by an Origin's Delete when the object is no
// longer what was listed: someone wrote it meanwhile.
var ErrChanged = errors.New("object changed since it was listed")
