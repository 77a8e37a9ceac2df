package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets/graph"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verify/cdn"
)

// Output says what Record does with the manifest once it is made.
type Output struct {
	// Path is the file the manifest is written to, atomically; "" writes
	// nothing (the caller takes Result.Raw, e.g. to stdout).
	Path string
	// CheckCDN, if set, checks every recorded asset on every CDN base
	// (verify/cdn.Check with these options) before anything is written:
	// an asset that is missing or wrong refuses the release.
	CheckCDN *cdn.Options
	// Sign, if set, signs the manifest's bytes; the signature (cosign's
	// base64 format) is written to Path + ".sig". It needs a Path.
	Sign signature.SignFunc
	// Bundle, with Sign, is where a Sigstore bundle is written too ("":
	// none; Sign must then make one).
	Bundle string
	// GraphReport, if set, is where what the asset graph found is written
	// as JSON (graph.Result: the pages the closure starts from, the files
	// no page reaches, the files whose loads it cannot read), atomically,
	// once the manifest is made and checked, before it is signed and
	// written.
	GraphReport string
}

// Result is what Record made and wrote.
type Result struct {
	Manifest *manifest.Manifest
	// Raw is the manifest's canonical encoding; Digest its SHA-256.
	Raw    []byte
	Digest manifest.Digest
	// CDN is the CDN check's report, when Output.CheckCDN was set and the
	// check ran (also when it refused the release).
	CDN *cdn.Report
	// Graph is what the asset graph found (nil without assets or a
	// graph): its roots, the files no root reaches, the files it could
	// not read.
	Graph *graph.Result
	// Path, Signature, Bundle and GraphReport are the files written (""
	// for none).
	Path, Signature, Bundle, GraphReport string
}

// Record is `lockstep record`: it makes the manifest (Manifest), checks
// its assets on the CDN, signs it, and writes it with its signature beside
// it, in that order, so that a refusal or a failure at any step writes
// nothing. The files are written by manifest.WriteFile, as every command
// writes a manifest: the signature and bundle first, then the stale
// sidecars of the file replaced are removed (an unsigned record leaves no
// older .sig beside the new manifest), then the manifest, last.
//
// Errors: those of Manifest; from the CDN check, what cdn.Check returns
// (a *manifest.ValidationError for an origin that is the CDN) and the
// report's verdict (Report.Err: a *verdict.MismatchError for a missing or
// wrong asset, a *verdict.UnavailableError for an unreachable one), with a
// Result carrying the report; a *manifest.ValidationError for Sign without
// Path; signing's and writing's errors.
func Record(ctx context.Context, opts Options, out Output) (*Result, error) {
	if out.Sign != nil && out.Path == "" {
		return nil, &manifest.ValidationError{Field: "output", Reason: "a signed manifest needs a file to write it to (its signature goes beside it)"}
	}
	if out.Sign == nil && out.Bundle != "" {
		return nil, &manifest.ValidationError{Field: "bundle", Reason: "a bundle needs a signing key"}
	}
	m, g, err := manifestAndGraph(ctx, opts)
	if err != nil {
		return nil, err
	}
	res := &Result{Manifest: m, Graph: g}
	if out.CheckCDN != nil {
		if len(m.Assets.Files) == 0 {
			return nil, &manifest.ValidationError{Field: "assets", Reason: "the CDN check needs assets to check: give an asset directory"}
		}
		rep, err := cdn.Check(ctx, m.Assets, *out.CheckCDN)
		if err != nil {
			return nil, fmt.Errorf("checking the assets on the CDN: %w", err)
		}
		res.CDN = rep
		if err := rep.Err(); err != nil {
			return res, fmt.Errorf("the CDN does not serve the release's assets: %w", err)
		}
	}
	if res.Raw, err = m.Encode(); err != nil {
		return nil, err
	}
	res.Digest = manifest.SHA256(res.Raw)
	// What the graph found is written before the manifest: a report of
	// the build, which a failure to sign or write leaves behind, never a
	// manifest without it.
	if out.GraphReport != "" && g != nil {
		b, err := json.MarshalIndent(g, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := atomicfile.Write(out.GraphReport, append(b, '\n'), 0o644); err != nil {
			return nil, err
		}
		res.GraphReport = out.GraphReport
	}
	if out.Path == "" {
		return res, nil
	}
	var sig *signature.Signature
	if out.Sign != nil {
		if sig, err = out.Sign(ctx, res.Raw); err != nil {
			return nil, fmt.Errorf("signing the manifest: %w", err)
		}
		if out.Bundle != "" && sig.Bundle == nil {
			return nil, errors.New("signing the manifest made no bundle")
		}
	}
	w := &manifest.Signed{Raw: res.Raw}
	var at manifest.SidecarPaths
	if sig != nil {
		w.Signature = sig.Base64
		if out.Bundle != "" {
			w.Bundle, at.Bundle = sig.Bundle, out.Bundle
		}
	}
	paths, err := manifest.WriteFile(out.Path, w, at)
	if err != nil {
		return nil, err
	}
	res.Path, res.Signature, res.Bundle = out.Path, paths.Signature, paths.Bundle
	return res, nil
}

// Write renders the result for stdout: the manifest's digest and a
// newline once the manifest is written to a file (Path); with no file, the
// manifest itself, its exact bytes, followed by a newline only when
// terminal (for the prompt: a pipe or a file gets the exact bytes).
// Summary is record's JSON report (lockstep record --format json): the
// release and generation recorded (the one --generation auto took), the
// manifest's digest, and the files written; the manifest itself when it
// was written to no file.
type Summary struct {
	Release    string          `json:"release"`
	Generation int64           `json:"generation"`
	Digest     manifest.Digest `json:"digest"`
	Images     int             `json:"images"`
	Assets     int             `json:"assets"`
	// Files are the files written: "manifest", "signature", "bundle",
	// "graphReport" (absent when not written).
	Files map[string]string `json:"files"`
	// Manifest is the manifest, when no file holds it (no Output.Path).
	Manifest json.RawMessage `json:"manifest,omitempty"`
}

// Summary is r as record's JSON report.
func (r *Result) Summary() Summary {
	s := Summary{Release: r.Manifest.Release.Name, Generation: r.Manifest.Release.Generation, Digest: r.Digest,
		Images: len(r.Manifest.Images), Assets: len(r.Manifest.Assets.Files), Files: map[string]string{}}
	for k, v := range map[string]string{"manifest": r.Path, "signature": r.Signature, "bundle": r.Bundle, "graphReport": r.GraphReport} {
		if v != "" {
			s.Files[k] = v
		}
	}
	if r.Path == "" {
		s.Manifest = r.Raw
	}
	return s
}

// WriteJSON writes r's Summary as one JSON document.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.Summary())
}

func (r *Result) Write(w io.Writer, terminal bool) error {
	if r.Path != "" {
		_, err := fmt.Fprintln(w, r.Digest)
		return err
	}
	b := r.Raw
	if terminal {
		b = append(b[:len(b):len(b)], '\n')
	}
	_, err := w.Write(b)
	return err
}
