package manifest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
	sig, err := os.ReadFile(f.Path + SignatureSuffix)
	switch {
	case err == nil:
		s.Signature = sig
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("reading signature: %w", err)
	}
	bundle, err := os.ReadFile(f.Path + BundleSuffix)
	switch {
	case err == nil:
		s.Bundle = bundle
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("reading signature bundle: %w", err)
	}
	return s, nil
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
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if len(raw) > MaxSize {
		return nil, invalid("", "%s is over the %d byte limit", path, MaxSize)
	}
	return raw, nil
}
