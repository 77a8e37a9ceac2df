package pin

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/pin/internal/rewrite"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// Options say what Run pins and rewrites.
type Options struct {
	// Requests are the references to pin. Empty pins every tag referenced
	// in the Write files (each once, without the digest it may be pinned
	// to already).
	Requests []registry.Request
	// Write are files whose image references are rewritten, in place and
	// atomically, to their pinned form; their pinned references are
	// registry.Options.Known, so a tag that moved away from the digest a
	// file pins is refused.
	Write []string
	// Registry configures resolving (registry.Resolve): platform,
	// concurrency, client, cache, Previous and AllowMoved. Run sets its
	// Known from Write and its Verifier from Signatures; a nil Logger is
	// Logger.
	Registry registry.Options
	// Signatures, if set, returns the verifier of every pinned image's
	// cosign signatures (nil: none verified); the report then says, per
	// image, how. Run calls it once the Write files are loaded, before any
	// registry request, so that a file that cannot be read is refused
	// before the verifier's own set-up (which may fetch a trusted root).
	// Its error is Run's.
	Signatures func(context.Context) (*imagesig.Verifier, error)
	// Logger receives progress and warnings; nil is silent.
	Logger *slog.Logger
}

// FileError is a Write file that cannot be read or parsed: nothing was
// pinned or written. It is invalid input.
type FileError struct{ Err error }

func (e *FileError) Error() string { return e.Err.Error() }

// Unwrap returns the cause: an error wrapping a *fs.PathError, or a
// *rewrite.ParseError.
func (e *FileError) Unwrap() error { return e.Err }

// InvalidInput marks a FileError as invalid input (exit 2).
func (e *FileError) InvalidInput() bool { return true }

// Run loads the Write files, resolves the references (registry.Resolve),
// and, when nothing is refused, rewrites the files; it returns the report.
//
// Errors: a *manifest.ValidationError when there is nothing to pin; a
// *FileError for a Write file that cannot be read or parsed (before any
// request); Signatures' error; what registry.Resolve returns. On a
// refusal (a moved tag, an image without a valid signature: a
// *registry.MovedTagError or the verifier's mismatch, joined) the Report
// is returned with the error, saying why, and no file is written; on any
// other error the Report is nil. A file that cannot be written is
// rewrite.Write's error.
func Run(ctx context.Context, opts Options) (*Report, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(opts.Requests) == 0 && len(opts.Write) == 0 {
		return nil, &manifest.ValidationError{Reason: "nothing to pin: give image references or files to rewrite"}
	}
	files, err := rewrite.Load(opts.Write...)
	if err != nil {
		return nil, &FileError{Err: err}
	}
	reg := opts.Registry
	reg.Known = slices.Clip(reg.Known) // appended to: never the caller's array
	for _, f := range files {
		reg.Known = append(reg.Known, f.Refs()...)
	}
	if reg.Logger == nil {
		reg.Logger = opts.Logger
	}
	var sigs *imagesig.Verifier
	if opts.Signatures != nil {
		if sigs, err = opts.Signatures(ctx); err != nil {
			return nil, err
		}
	}
	if sigs != nil {
		reg.Verifier = sigs
	}
	reqs := opts.Requests
	if len(reqs) == 0 {
		reqs = fileRequests(files, log.Warn)
	}
	res, err := registry.Resolve(ctx, reqs, reg)
	if res == nil {
		return nil, err
	}
	report := newReport(res, sigs)
	if err != nil {
		return report, err
	}
	if len(files) > 0 {
		if report.Written, err = rewrite.Write(files, registry.Replacer(res.Images)); err != nil {
			return nil, err
		}
		for _, r := range report.Written {
			log.Info("rewrote", "file", r.Path, "format", string(r.Format), "references", len(r.Changes))
		}
	}
	return report, nil
}

// ParseRequests parses "[NAME=]REF" arguments: NAME, the image's role, must
// be a valid name and given once; without it the role is the reference.
func ParseRequests(args []string) ([]registry.Request, error) {
	var out []registry.Request
	names := map[string]bool{}
	for _, a := range args {
		name, ref, ok := strings.Cut(a, "=")
		if !ok {
			ref, name = a, ""
		} else if err := manifest.ValidateName(name); err != nil {
			return nil, fmt.Errorf("image name in %q: %v", a, err)
		}
		if name != "" && names[name] {
			return nil, fmt.Errorf("image name %q is given twice", name)
		}
		names[name] = true
		out = append(out, registry.Request{Name: name, Ref: ref})
	}
	return out, nil
}

// fileRequests are the tags referenced in files, each once, without the
// digest they may be pinned to already (the pinned digest is Known, so a
// tag that moved away from it is refused); references pinned by digest
// alone are skipped, and ones that do not parse (e.g. with a variable) are
// skipped with a warning.
func fileRequests(files []*rewrite.File, warn func(string, ...any)) []registry.Request {
	var out []registry.Request
	seen := map[string]bool{}
	for _, f := range files {
		for _, ref := range f.Refs() {
			tag, ok := registry.TagOf(ref)
			if !ok {
				if !strings.Contains(ref, "@") {
					warn("not an image reference, left alone", "file", f.Path, "ref", ref)
				}
				continue
			}
			if key, _ := registry.TagKey(tag); !seen[key] {
				seen[key] = true
				out = append(out, registry.Request{Ref: tag})
			}
		}
	}
	return out
}
