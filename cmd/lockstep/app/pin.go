package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/rewrite"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/internal/transport/ggcrretry"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/imagesig"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

func pinCommand() *cli.Command {
	return &cli.Command{
		Name:      "pin",
		Usage:     "resolve image references to their digests (and rewrite files to use them)",
		ArgsUsage: "[NAME=]REF...",
		Description: `Resolves each reference with the registry and prints its pinned form,
repo:tag@sha256:…, one a line (--format json: every digest). NAME= names the
image's role (default: the reference). With --previous, a tag that now names
other bytes than in that manifest is refused (exit 1) unless
--allow-moved-tag names it. --write rewrites the references in Kubernetes
YAML, docker-compose, ECS task definitions and Dockerfiles in place; without
REF arguments, every reference found in those files is pinned.

With --verify-key PUB (or the keyless --certificate-identity[-regexp] and
--certificate-oidc-issuer[-regexp] flags), the cosign signature of each
pinned digest is verified too, offline (no transparency-log call); for an
index, --image-signature-policy says which manifests must be signed
(default: every platform pinned).

Exit codes: 0 pinned (and verified); 1 a moved tag, or an unsigned or
wrongly signed image; 2 a bad reference, flag, key or file, or an image
that does not exist; 3 the registry could not be reached or refused the
credentials.`,
		Flags: append([]cli.Flag{
			formatFlag("text", "json"),
			&cli.StringFlag{Name: "platform", Usage: "keep only this platform of each image: `OS/ARCH`[/VARIANT]"},
			&cli.StringFlag{Name: "previous", Usage: "the previous release `MANIFEST`: refuse tags that moved since"},
			&cli.GenericFlag{Name: "allow-moved-tag", Value: &repeated{}, Usage: "accept this moved tag: a role `NAME`, a REF or a repo:tag; repeatable"},
			&cli.GenericFlag{Name: "write", Value: &repeated{}, Usage: "rewrite the image references in `FILE` to their pinned form; repeatable"},
			&cli.IntFlag{Name: "concurrency", Value: registry.DefaultConcurrency, Usage: "references resolved at once"},
			&cli.StringFlag{Name: "cache", Value: defaultPinCache(), EnvVars: []string{"LOCKSTEP_CACHE"},
				Usage: "`DIR` of image configs and platform manifests kept by digest (verified on read); empty for none"},
		}, append(imageSignatureFlags(), identityFlags()...)...),
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return usage(err) },
		Action:       runPin,
	}
}

// defaultPinCache is $XDG_CACHE_HOME/lockstep/registry (or the platform's
// user cache directory), or none when there is no such directory.
func defaultPinCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "lockstep", "registry")
}

// repeated is a flag that may be given many times; unlike
// cli.StringSliceFlag it does not split values on commas (paths may hold
// them).
type repeated []string

func (r *repeated) Set(s string) error { *r = append(*r, s); return nil }
func (r *repeated) String() string     { return strings.Join(*r, ", ") }

func repeatedFlag(c *cli.Context, name string) []string {
	if r, ok := c.Generic(name).(*repeated); ok && r != nil {
		return *r
	}
	return nil
}

// pinReport is the JSON shape of lockstep pin, documented in the README.
type pinReport struct {
	Images  []pinnedImage       `json:"images"`
	Moved   []registry.MovedTag `json:"moved"`
	Written []rewrite.Result    `json:"written"`
}

type pinnedImage struct {
	// Pinned is repo:tag@digest, as in the text output.
	Pinned string `json:"pinned"`
	manifest.Image
	// Signature says how the image's signatures were verified; absent
	// when pin verifies none.
	Signature *imageSignature `json:"signature,omitempty"`
}

// imageSignature is the JSON shape of one image's signature verification.
type imageSignature struct {
	// Verified: every digest of Digests carries a valid signature.
	Verified bool `json:"verified"`
	// Signer is whose signatures count: "key SHA256:…" or the keyless
	// identity.
	Signer string `json:"signer"`
	// Policy is the index policy: platforms, index or all.
	Policy string `json:"policy"`
	// Digests are the digests the policy requires signed.
	Digests []signedDigest `json:"digests"`
	// Error is the refusal, when not Verified.
	Error string `json:"error,omitempty"`
}

type signedDigest struct {
	// What is "image" (a single manifest), "index", or a platform.
	What   string          `json:"what"`
	Digest manifest.Digest `json:"digest"`
}

func runPin(c *cli.Context) error {
	form, err := format(c, "text", "json")
	if err != nil {
		return err
	}
	if c.Int("concurrency") < 1 {
		return usage(fmt.Errorf("--concurrency %d: want at least 1", c.Int("concurrency")))
	}
	reqs, err := pinRequests(c.Args().Slice())
	if err != nil {
		return usage(err)
	}
	writes := repeatedFlag(c, "write")
	if len(reqs) == 0 && len(writes) == 0 {
		return usage(errors.New("pin needs image references, or files to --write"))
	}
	var prev *manifest.Manifest
	if path := c.String("previous"); path != "" {
		if prev, _, err = manifest.ReadFile(path); err != nil {
			return inputError("--previous", err)
		}
	}
	files, err := rewrite.Load(writes...)
	if err != nil {
		return inputError("--write", err)
	}
	log := logger(c)
	client := newClient(c, transport.DefaultPolicy(), clientOptions{})
	sigs, err := pinSignatures(c, client)
	if err != nil {
		return err
	}
	var known []string
	for _, f := range files {
		known = append(known, f.Refs()...)
	}
	if len(reqs) == 0 {
		reqs = fileRequests(files, log.Warn)
	}
	opt := registry.Options{
		Platform:    c.String("platform"),
		Concurrency: c.Int("concurrency"),
		Client:      client,
		Previous:    prev,
		Known:       known,
		AllowMoved:  repeatedFlag(c, "allow-moved-tag"),
		Cache:       c.String("cache"),
		Logger:      log,
	}
	if sigs != nil {
		opt.Verifier = sigs
	}
	res, err := registry.Resolve(c.Context, reqs, opt)
	if res == nil {
		return err
	}
	report := pinReport{Images: []pinnedImage{}, Moved: res.Moved, Written: []rewrite.Result{}}
	for i, im := range res.Images {
		pi := pinnedImage{Pinned: registry.Pinned(im), Image: im}
		if sigs != nil {
			pi.Signature = signatureReport(sigs, &im, res.Refusals[i])
		}
		report.Images = append(report.Images, pi)
	}
	if err != nil {
		// Refused: the JSON report says why; text prints no pins.
		if form == "json" {
			if werr := renderPin(c, form, report); werr != nil {
				return werr
			}
		}
		return err
	}
	if len(files) > 0 {
		if report.Written, err = rewrite.Write(files, registry.Replacer(res.Images)); err != nil {
			return err
		}
		for _, r := range report.Written {
			log.Info("rewrote", "file", r.Path, "format", string(r.Format), "references", len(r.Changes))
		}
	}
	return renderPin(c, form, report)
}

// pinSignatures is the image-signature verifier pin's flags ask for, or
// nil when they name no signer (--verify-key, alias --image-key, or a
// keyless --certificate-* flag). The policy's platforms are --platform's,
// else every platform pinned; the verifier's registry requests share
// client and the default keychain with pinning.
func pinSignatures(c *cli.Context, client *transport.Client) (*imagesig.Verifier, error) {
	named := false
	for _, f := range []string{"image-key", "certificate-identity", "certificate-identity-regexp", "certificate-oidc-issuer", "certificate-oidc-issuer-regexp"} {
		named = named || c.String(f) != ""
	}
	if !named {
		return nil, nil
	}
	var platforms []string
	if p := c.String("platform"); p != "" {
		platforms = []string{p}
	}
	return imageVerifierFromFlags(c, platforms, append(ggcrretry.Options(client), remote.WithAuthFromKeychain(authn.DefaultKeychain)))
}

// signatureReport says how im's signatures were verified: refusal is the
// verifier's, nil when it accepted im.
func signatureReport(v *imagesig.Verifier, im *manifest.Image, refusal error) *imageSignature {
	pol := v.Policy()
	r := &imageSignature{Verified: refusal == nil, Signer: v.Signer(), Policy: string(pol.Index), Digests: []signedDigest{}}
	targets, _ := pol.Targets(im) // an error here is the refusal
	for _, t := range targets {
		r.Digests = append(r.Digests, signedDigest{What: t.What, Digest: t.Digest})
	}
	if refusal != nil {
		r.Error = refusal.Error()
	}
	return r
}

func renderPin(c *cli.Context, form string, r pinReport) error {
	if form == "json" {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	}
	var b strings.Builder
	for _, im := range r.Images {
		b.WriteString(im.Pinned)
		b.WriteByte('\n')
	}
	_, err := fmt.Fprint(c.App.Writer, b.String())
	return err
}

// pinRequests parses "[NAME=]REF" arguments.
func pinRequests(args []string) ([]registry.Request, error) {
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
