package manifest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/lockstep-dev/lockstep/internal/regfile"
)

// FileSource reads a manifest from a file, and its signature from the file
// beside it with ".sig" appended (MANIFEST.sig) and its Sigstore bundle
// from the file with ".sigstore.json" appended (MANIFEST.sigstore.json),
// where there are.
type FileSource struct {
	Path string
}

var _ Source = FileSource{}

// Fetch reads, parses and returns the manifest. A missing or unreadable
// file is a *fs.PathError; an invalid document a *ValidationError.
func (f FileSource) Fetch(ctx context.Context) (*Signed, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	raw, err := readCapped(f.Path)
	if err != nil {
		return nil, err
	}
	s, err := NewSigned(raw, f.Path)
	if err != nil {
		return nil, err
	}
	if s.Signature, err = ReadSidecar(f.Path+SignatureSuffix, regfile.Read); err != nil {
		return nil, fmt.Errorf("reading signature: %w", err)
	}
	if s.Bundle, err = ReadSidecar(f.Path+BundleSuffix, regfile.Read); err != nil {
		return nil, fmt.Errorf("reading signature bundle: %w", err)
	}
	return s, nil
}

// MaxSidecarSize bounds a signature or bundle file, in bytes.
const MaxSidecarSize = 1 << 20

// ReadSidecar reads the signature or bundle at path with read (one of
// regfile's readers), at most MaxSidecarSize bytes. A file that is not
// there is nil, no error; an empty file is an empty, non-nil slice, which a
// verifier refuses as an invalid signature rather than taking for none.
func ReadSidecar(path string, read func(string, int64) ([]byte, error)) ([]byte, error) {
	b, err := read(path, MaxSidecarSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// ReadFile reads and parses a manifest file.
func ReadFile(path string) (*Manifest, []byte, error) {
	raw, err := readCapped(path)
	if err != nil {
		return nil, nil, err
	}
	m, err := Parse(raw)
	if err != nil {
		return nil, nil, err
	}
	return m, raw, nil
}

func readCapped(path string) ([]byte, error) {
	raw, err := regfile.Read(path, MaxSize)
	var tl *regfile.TooLargeError
	if errors.As(err, &tl) {
		return nil, invalid("", "%s is over the %d byte limit", path, MaxSize)
	}
	return raw, err
}
