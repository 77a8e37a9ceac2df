package prune

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// DirOrigin is an Origin in a local directory (an nginx or CDN origin's
// document root). Every operation goes through an os.Root, so that no
// path resolves outside the directory, and symbolic links are neither
// followed nor deleted.
type DirOrigin struct {
	dir string
}

var _ Origin = (*DirOrigin)(nil)

// Dir returns the origin in directory dir. The directory is opened by
// each call, not here.
func Dir(dir string) *DirOrigin { return &DirOrigin{dir: dir} }

// String returns the directory.
func (d *DirOrigin) String() string { return d.dir }

// List walks the directory without following a symbolic link: a link
// (and any other entry that is not a regular file or a directory) is
// listed as Irregular. Dot files are listed like any other.
func (d *DirOrigin) List(ctx context.Context) ([]Object, error) {
	root, err := os.OpenRoot(d.dir)
	if err != nil {
		return nil, fmt.Errorf("opening origin %s: %w", d.dir, err)
	}
	defer root.Close()
	var out []Object
	err = fs.WalkDir(root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		fi, err := root.Lstat(p)
		if err != nil {
			return err
		}
		out = append(out, Object{Key: p, Size: fi.Size(), ModTime: fi.ModTime(), Irregular: !fi.Mode().IsRegular()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing origin %s: %w", d.dir, err)
	}
	return out, nil
}

// Delete removes the regular file o.Key if its size and modification
// time are still those listed, then any directory it leaves empty.
func (d *DirOrigin) Delete(ctx context.Context, o Object) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !fs.ValidPath(o.Key) || o.Key == "." {
		return fmt.Errorf("deleting %q: not a path inside the origin", o.Key)
	}
	root, err := os.OpenRoot(d.dir)
	if err != nil {
		return fmt.Errorf("opening origin %s: %w", d.dir, err)
	}
	defer root.Close()
	fi, err := root.Lstat(o.Key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Size() != o.Size || !fi.ModTime().Equal(o.ModTime) {
		return fmt.Errorf("deleting %s: %w", o.Key, ErrChanged)
	}
	if err := root.Remove(o.Key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for p := path.Dir(o.Key); p != "."; p = path.Dir(p) {
		if root.Remove(p) != nil { // not empty, or not ours to remove
			break
		}
	}
	return nil
}
