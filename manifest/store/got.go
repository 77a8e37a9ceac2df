package store

import (
	"encoding/json"
	"io"

	"github.com/lockstep-dev/lockstep/manifest"
)

// Got is what `lockstep manifest get` says of the manifest it fetched and
// verified: whose it is, its digest, and the files written; with no file
// (stdout), the manifest itself.
type Got struct {
	Release    string          `json:"release"`
	Channel    string          `json:"channel"`
	Generation int64           `json:"generation"`
	Digest     manifest.Digest `json:"digest"`
	// Files are the files written: "manifest", "signature", "bundle"
	// (absent when not written).
	Files map[string]string `json:"files"`
	// Manifest is the manifest's bytes, when no file holds them.
	Manifest json.RawMessage `json:"manifest,omitempty"`
}

// NewGot is the report of s, fetched from channel and written to path
// with the sidecars side ("" path: written to no file).
func NewGot(s *manifest.Signed, channel, path string, side manifest.SidecarPaths) Got {
	if channel == "" {
		channel = DefaultChannel
	}
	g := Got{Release: s.Manifest.Release.Name, Channel: channel, Generation: s.Manifest.Release.Generation,
		Digest: s.Digest, Files: map[string]string{}}
	for k, v := range map[string]string{"manifest": path, "signature": side.Signature, "bundle": side.Bundle} {
		if v != "" {
			g.Files[k] = v
		}
	}
	if path == "" {
		g.Manifest = s.Raw
	}
	return g
}

// Write renders g in format: "text" (the manifest's bytes when no file
// holds them, else its digest, a line) or "json" (g, indented).
func (g Got) Write(w io.Writer, format string) error {
	switch {
	case format == "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(g)
	case g.Files["manifest"] == "":
		_, err := w.Write(g.Manifest)
		return err
	}
	_, err := io.WriteString(w, g.Digest.String()+"\n")
	return err
}
