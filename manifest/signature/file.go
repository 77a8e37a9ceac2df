package signature

import (
	"context"
	"errors"

	"github.com/lockstep-dev/lockstep/internal/regfile"
	"github.com/lockstep-dev/lockstep/manifest"
)

// The files beside a manifest file that hold its signature, as
// manifest.FileSource reads them.
const (
	SignatureSuffix = manifest.SignatureSuffix
	BundleSuffix    = manifest.BundleSuffix
)

// SignFunc signs a manifest's bytes: Sign with a key, or keyless.Sign.
type SignFunc func(ctx context.Context, raw []byte) (*Signature, error)

// FileOutputs say where SignFile writes.
type FileOutputs struct {
	// Signature is the base64 signature's path; "" is MANIFEST.sig.
	Signature string
	// Bundle is the Sigstore bundle's path; "" writes none. The sign
	// function must then make one (SignOptions.Bundle; keyless always
	// does). Keyless signatures need their bundle: callers default it to
	// MANIFEST.sigstore.json, where consumers look.
	Bundle string
}

// FileResult says what SignFile signed and wrote.
type FileResult struct {
	Manifest  string          `json:"manifest"`
	Release   string          `json:"release"`
	Digest    manifest.Digest `json:"digest"`
	Signature string          `json:"signature"`
	Bundle    string          `json:"bundle,omitempty"`
}

// SignFile signs the manifest file at path (its exact bytes; it must be a
// valid manifest: a *manifest.ValidationError otherwise) with sign, and
// writes the signature and bundle with manifest.WriteFile (the one writer
// of a manifest's files; the manifest itself, unchanged, is not
// rewritten): a reader sees the old file or the new, and on error nothing
// is left half written.
func SignFile(ctx context.Context, path string, sign SignFunc, out FileOutputs) (*FileResult, error) {
	m, raw, err := manifest.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := m.Digest()
	if err != nil {
		return nil, err
	}
	sig, err := sign(ctx, raw)
	if err != nil {
		return nil, err
	}
	w := &manifest.Signed{Raw: raw, Signature: sig.Base64}
	if out.Bundle != "" {
		if sig.Bundle == nil {
			return nil, errors.New("signing made no bundle")
		}
		w.Bundle = sig.Bundle
	}
	paths, err := manifest.WriteFile(path, w, manifest.SidecarPaths{Signature: out.Signature, Bundle: out.Bundle})
	if err != nil {
		return nil, err
	}
	return &FileResult{Manifest: path, Release: m.ID(), Digest: d, Signature: paths.Signature, Bundle: paths.Bundle}, nil
}

// VerifyFile reads the manifest file at path with the signature and bundle
// beside it (or at sigPath and bundlePath, when set) and verifies it with
// v. It returns the manifest as read, and v's error: an *Error for a
// refusal.
func VerifyFile(ctx context.Context, v manifest.Verifier, path, sigPath, bundlePath string) (*manifest.Signed, error) {
	s, err := manifest.FileSource{Path: path}.Fetch(ctx)
	if err != nil {
		return nil, err
	}
	if sigPath != "" {
		if s.Signature, err = regfile.Read(sigPath, manifest.MaxSidecarSize); err != nil {
			return s, err
		}
	}
	if bundlePath != "" {
		if s.Bundle, err = regfile.Read(bundlePath, manifest.MaxSidecarSize); err != nil {
			return s, err
		}
	}
	return s, v.Verify(ctx, s)
}
