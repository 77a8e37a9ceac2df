package record

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
	"github.com/lockstep-dev/lockstep/manifest/assets/graph"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

// Image is one image of a release as given: its role name and reference.
type Image struct {
	Name string
	Ref  string
}

// ParseImage parses "NAME=REF", e.g. "web=registry.example/store/web:v1".
// A missing name or reference is a *manifest.ValidationError.
func ParseImage(s string) (Image, error) {
	name, ref, ok := strings.Cut(s, "=")
	name, ref = strings.TrimSpace(name), strings.TrimSpace(ref)
	if !ok || name == "" || ref == "" {
		return Image{}, &manifest.ValidationError{Field: "image", Reason: fmt.Sprintf("%q: want NAME=REF, e.g. web=registry.example/store/web:v1", s)}
	}
	return Image{Name: name, Ref: ref}, nil
}

// EmbedFunc returns the verification material of pinned images.
type EmbedFunc func(ctx context.Context, images []manifest.Image) (*manifest.Verification, error)

// ProvenanceFunc verifies the provenance of pinned images against the
// release's source and returns the attestations that passed, as
// verify/provenance's Verifier.Verify does.
type ProvenanceFunc func(ctx context.Context, images []manifest.Image, src *manifest.BuildSource) ([]manifest.EmbeddedAttestation, error)

// PreviousSource finds a release's previous manifest: nil, and no error,
// when there is none yet. store.ChannelSource implements it.
type PreviousSource interface {
	Previous(ctx context.Context) (*manifest.Signed, error)
}

// Options describe the release to record.
type Options struct {
	// Release is the service name; Generation its generation (≥ 1).
	Release    string
	Generation int64
	// Images are pinned, each by its reference: a tag is resolved to its
	// digest, and a reference by digest (repo@sha256:…) is resolved too,
	// for its platforms' manifest and config digests.
	Images []Image
	// Assets says which files to hash. An empty Assets.Dir records no
	// assets. Assets.CDN is set from CDN; a nil Assets.Logger is Logger.
	Assets assets.Options
	// NoGraph records no asset graph (manifest.File.Loads, drawn by
	// graph.Build from the asset lists and the files): the manifest is then
	// written as lockstep.dev/v1, which gates older than v2 read. By default
	// the graph is recorded, and a manifest whose assets load one another
	// is lockstep.dev/v2.
	NoGraph bool
	// InstancePaths and CDNPaths say which files the instance serves
	// itself rather than the CDN (manifest.File.Served, a lockstep.dev/v3
	// field): a file whose path, a folder of it, or name matches an
	// InstancePaths pattern (path.Match), and, when CDNPaths is set, every
	// file under none of its folders (Next.js with assetPrefix: the CDN
	// serves _next/ only). A bad pattern, or a pattern or folder that
	// names no recorded file, is a *manifest.ValidationError (a typo would
	// otherwise send the gate to the wrong place for nothing it names).
	InstancePaths []string
	CDNPaths      []string
	// CDNAndInstancePaths are the patterns of the files both serve
	// (manifest.ServedCDNAndInstance: Angular's app shell, which the page
	// loads from the CDN and the service worker from its scope): such a
	// match wins over InstancePaths and CDNPaths.
	CDNAndInstancePaths []string
	// CDN holds the base URLs the assets are served under (required with
	// assets); Origin is the CDN's origin, optional.
	CDN    []string
	Origin string
	// ExpiresIn, if positive, sets the manifest's expiresAt that long
	// after its createdAt.
	ExpiresIn time.Duration
	// Source is where the release was built; nil takes it from the GitHub
	// Actions environment (SourceFromEnv), or records none outside it.
	Source *manifest.BuildSource
	// Getenv reads the environment for Source; nil is os.Getenv.
	Getenv func(string) string
	// Now is the clock for createdAt; nil is time.Now.
	Now func() time.Time
	// Registry configures pinning (registry.Pin): its Client is the shared
	// transport (nil: a new one with the default policy).
	Registry registry.Options
	// Embed, if set, returns the images' signature material to embed in
	// the manifest (Manifest.Verification), e.g. verify/imagesig's
	// Verifier.Embed: a consumer then verifies the images' signatures from
	// the manifest alone. Its error fails the record.
	Embed EmbedFunc
	// Provenance, if set, verifies the images' build provenance against
	// the release's source (Source, or the environment's) once they are
	// pinned: its error (a refusal, or a registry that cannot be read)
	// fails the record. A release whose source names no repository or
	// commit is a *manifest.ValidationError (field release.source), before
	// any network call.
	Provenance ProvenanceFunc
	// EmbedAttestations embeds what Provenance verified in the manifest
	// (Verification.Attestations, an apiVersion v2 field), so that a
	// consumer verifies the provenance from the manifest alone. It needs
	// Provenance.
	EmbedAttestations bool
	// Previous, when set, is the release's previous manifest: a tag that
	// now names other bytes than there is refused with a
	// *registry.MovedTagError (a mismatch), unless AllowMoved names it
	// (registry.MovedTag.Matches), as `pin --previous` does.
	Previous *manifest.Manifest
	// PreviousFrom, when Previous is nil, finds the previous manifest
	// before any image is pinned (store.ChannelSource, the channel the
	// release is published to, is one); none there (nil, nil) means no
	// tag is compared, and says so in the log.
	PreviousFrom PreviousSource
	AllowMoved   []string
	// Logger receives progress; nil is silent.
	Logger *slog.Logger
}

// Manifest pins the images and hashes the assets that opts name, at the
// same time, and returns the release manifest, validated.
//
// Errors: a *manifest.ValidationError for options that cannot make a valid
// manifest (checked before any network call or hashing); an *assets.Error
// for an asset that cannot be recorded; from pinning, what registry.Pin
// returns (a *verdict.UnavailableError when the registry cannot be asked),
// wrapped with the image's name; Provenance's error (a refusal, exit 1, or
// a registry that cannot be read) and Embed's, wrapped.
func Manifest(ctx context.Context, opts Options) (*manifest.Manifest, error) {
	m, _, err := manifestAndGraph(ctx, opts)
	return m, err
}

// manifestAndGraph is Manifest, with what the asset graph found (nil
// without assets or with NoGraph).
func manifestAndGraph(ctx context.Context, opts Options) (*manifest.Manifest, *graph.Result, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Source == nil {
		getenv := opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		opts.Source = SourceFromEnv(getenv)
	}
	if err := check(opts); err != nil {
		return nil, nil, err
	}
	if opts.Previous == nil && opts.PreviousFrom != nil {
		s, err := opts.PreviousFrom.Previous(ctx)
		if err != nil {
			return nil, nil, err
		}
		if s == nil {
			log.Info("no previous release: nothing to compare tags with", "release", opts.Release)
		} else {
			log.Info("comparing tags with the previous release", "release", s.Manifest.ID(), "digest", s.Digest.String())
			opts.Previous = s.Manifest
		}
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	created := now().UTC().Truncate(time.Second)
	m := &manifest.Manifest{
		APIVersion: manifest.APIVersion,
		Kind:       manifest.Kind,
		Release:    manifest.Release{Name: opts.Release, Generation: opts.Generation, CreatedAt: created, Source: opts.Source},
		Images:     []manifest.Image{},
		Assets:     manifest.Assets{CDN: opts.CDN, Origin: opts.Origin, Files: []manifest.File{}},
	}
	if opts.ExpiresIn > 0 {
		exp := created.Add(opts.ExpiresIn)
		m.Release.ExpiresAt = &exp
	}
	if m.Assets.CDN == nil {
		m.Assets.CDN = []string{}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var hashed *assets.Result
	var g *graph.Result
	var hashErr error
	if opts.Assets.Dir != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ao := opts.Assets
			ao.CDN = opts.CDN
			if ao.Logger == nil {
				ao.Logger = opts.Logger
			}
			// The graph's references are read as the files are hashed,
			// each file once.
			refs := &graph.Collector{}
			if !opts.NoGraph {
				ao.Inspect = refs.Inspect
			}
			hashed, hashErr = assets.Hash(ctx, ao)
			if hashErr == nil && !opts.NoGraph {
				g, hashErr = graph.Build(ctx, hashed.Files, graph.Options{
					Dir: ao.Dir, Lists: ao.Lists, PublicPath: ao.PublicPath, CDN: ao.CDN, Workers: ao.Workers, Logger: ao.Logger,
					Collected: refs, Excluded: hashed.Excluded,
				})
			}
			if hashErr == nil {
				hashErr = markServed(hashed.Files, servedRules{instance: opts.InstancePaths, both: opts.CDNAndInstancePaths, cdnDirs: opts.CDNPaths}, ao.Logger)
			}
			if hashErr != nil {
				cancel()
			}
		}()
	}
	images, pinErr := pinAll(ctx, opts, log)
	if pinErr == nil {
		pinErr = refuseMoved(opts, images, log)
	}
	if pinErr != nil {
		cancel()
	}
	wg.Wait()
	if err := cause(pinErr, hashErr); err != nil {
		return nil, nil, err
	}
	m.Images = images
	if hashed != nil {
		m.Assets.Files = hashed.Files
		log.Info("hashed assets", "files", len(hashed.Files), "bytes", hashed.Bytes)
	}
	var provenance []manifest.EmbeddedAttestation
	if opts.Provenance != nil && len(images) > 0 {
		atts, err := opts.Provenance(ctx, images, m.Release.Source)
		if err != nil {
			return nil, nil, fmt.Errorf("verifying the images' provenance: %w", err)
		}
		log.Info("verified the images' provenance", "attestations", len(atts), "repository", m.Release.Source.Repository, "commit", m.Release.Source.Commit)
		provenance = atts
	}
	if opts.Embed != nil && len(images) > 0 {
		v, err := opts.Embed(ctx, images)
		if err != nil {
			return nil, nil, fmt.Errorf("embedding the images' signatures: %w", err)
		}
		m.Verification = v
		if v != nil {
			log.Info("embedded image signatures", "signatures", len(v.Signatures))
		}
	}
	if opts.EmbedAttestations && len(provenance) > 0 {
		if m.Verification == nil {
			m.Verification = &manifest.Verification{}
		}
		m.Verification.Attestations = provenance
		log.Info("embedded provenance attestations", "attestations", len(provenance))
	}
	m.Assets.Fingerprint = manifest.Fingerprint(m.Assets.Files)
	if len(m.Assets.Files) == 0 {
		m.Assets.Fingerprint = manifest.Digest{}
	}
	// The oldest version that holds what was recorded: v1 unless the
	// assets carry a graph, so older gates keep reading what they can.
	m.APIVersion = m.Version()
	if err := manifest.Validate(m); err != nil {
		return nil, nil, err
	}
	return m, g, nil
}

// cause returns the first error that is not the cancellation one failure
// caused in the other's work, or else the first error.
func cause(errs ...error) error {
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !errors.Is(err, context.Canceled) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// check refuses, before any work, options that cannot make a valid
// manifest.
func check(opts Options) error {
	if err := manifest.ValidateName(opts.Release); err != nil {
		return &manifest.ValidationError{Field: "release.name", Reason: err.Error()}
	}
	if opts.Generation < 1 {
		return &manifest.ValidationError{Field: "release.generation", Reason: fmt.Sprintf("must be at least 1, got %d", opts.Generation)}
	}
	if opts.ExpiresIn < 0 {
		return &manifest.ValidationError{Field: "release.expiresAt", Reason: "the expiry is in the past"}
	}
	if len(opts.Images) == 0 && opts.Assets.Dir == "" {
		return &manifest.ValidationError{Reason: "nothing to record: give images, an asset directory, or both"}
	}
	if opts.EmbedAttestations && opts.Provenance == nil {
		return &verdict.OptionError{Option: "EmbedAttestations", Reason: "needs Provenance: only verified attestations are embedded"}
	}
	if opts.Provenance != nil && !opts.Source.Bindable() {
		return &manifest.ValidationError{Field: "release.source", Reason: "provenance is checked against the release's source repository and commit, and none is known (set the source, or record in GitHub Actions)"}
	}
	seen := map[string]bool{}
	for _, im := range opts.Images {
		if err := manifest.ValidateName(im.Name); err != nil {
			return &manifest.ValidationError{Field: "images." + im.Name, Reason: "image name " + err.Error()}
		}
		if seen[im.Name] {
			return &manifest.ValidationError{Field: "images." + im.Name, Reason: "the image name appears twice"}
		}
		seen[im.Name] = true
	}
	if opts.Assets.Dir == "" && len(opts.InstancePaths)+len(opts.CDNPaths)+len(opts.CDNAndInstancePaths) > 0 {
		return &manifest.ValidationError{Field: "assets.files.served", Reason: "where files are served needs an asset directory"}
	}
	for _, pat := range append(slices.Clone(opts.InstancePaths), opts.CDNAndInstancePaths...) {
		if _, err := path.Match(pat, ""); err != nil {
			return &manifest.ValidationError{Field: "assets.files.served", Reason: fmt.Sprintf("instance path pattern %q: %v", pat, err)}
		}
	}
	for _, d := range opts.CDNPaths {
		if d = strings.Trim(d, "/"); d == "" || manifest.ValidatePath(d) != nil {
			return &manifest.ValidationError{Field: "assets.files.served", Reason: fmt.Sprintf("CDN path %q is not a folder of the asset directory", d)}
		}
	}
	if opts.Assets.Dir != "" && len(opts.CDN) == 0 {
		return &manifest.ValidationError{Field: "assets.cdn", Reason: "a CDN base URL is required with assets"}
	}
	for i, base := range opts.CDN {
		if err := manifest.ValidateBaseURL(base); err != nil {
			return &manifest.ValidationError{Field: fmt.Sprintf("assets.cdn[%d]", i), Reason: err.Error()}
		}
	}
	if opts.Origin != "" {
		if err := manifest.ValidateBaseURL(opts.Origin); err != nil {
			return &manifest.ValidationError{Field: "assets.origin", Reason: err.Error()}
		}
		for _, base := range opts.CDN {
			if strings.TrimSuffix(base, "/") == strings.TrimSuffix(opts.Origin, "/") {
				return &manifest.ValidationError{Field: "assets.origin", Reason: fmt.Sprintf("%s is the CDN itself: an origin pointing at its CDN loops", opts.Origin)}
			}
		}
	}
	return nil
}

// refuseMoved returns a *registry.MovedTagError for the tags of images
// that moved since opts.Previous and that opts.AllowMoved does not name.
func refuseMoved(opts Options, images []manifest.Image, log *slog.Logger) error {
	var refused []registry.MovedTag
	for _, m := range registry.Moved(opts.Previous, images, opts.AllowMoved) {
		if m.Allowed {
			log.Warn("tag moved, allowed", "image", m.Name, "tag", m.Repository+":"+m.Tag, "previous", m.Previous.String(), "current", m.Current.String())
			continue
		}
		refused = append(refused, m)
	}
	if len(refused) > 0 {
		return &registry.MovedTagError{Tags: refused}
	}
	return nil
}

// pinAll pins every image, a few at a time, and returns them sorted by
// name. The first error in the order given wins.
func pinAll(ctx context.Context, opts Options, log *slog.Logger) ([]manifest.Image, error) {
	out := make([]manifest.Image, len(opts.Images))
	errs := make([]error, len(opts.Images))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, im := range opts.Images {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p, err := registry.Pin(ctx, im.Name, im.Ref, opts.Registry)
			if err != nil {
				errs[i] = fmt.Errorf("pinning image %s (%s): %w", im.Name, im.Ref, err)
				return
			}
			log.Info("pinned", "image", im.Name, "ref", im.Ref, "digest", p.Digest.String(), "platforms", len(p.Platforms))
			out[i] = *p
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// SourceFromEnv reads where a release was built from the GitHub Actions
// environment: GITHUB_SERVER_URL and GITHUB_REPOSITORY give the repository
// URL, GITHUB_SHA the commit, GITHUB_REF the ref, and GITHUB_RUN_ID (with
// GITHUB_RUN_ATTEMPT above 1) the workflow run URL. It returns nil when
// none of them is set.
func SourceFromEnv(getenv func(string) string) *manifest.BuildSource {
	server := strings.TrimSuffix(getenv("GITHUB_SERVER_URL"), "/")
	if server == "" {
		server = "https://github.com"
	}
	repo := getenv("GITHUB_REPOSITORY")
	s := &manifest.BuildSource{Commit: getenv("GITHUB_SHA"), Ref: getenv("GITHUB_REF")}
	if repo != "" {
		s.Repository = server + "/" + repo
		if run := getenv("GITHUB_RUN_ID"); run != "" {
			s.WorkflowRunURL = server + "/" + repo + "/actions/runs/" + run
			if a := getenv("GITHUB_RUN_ATTEMPT"); a != "" && a != "1" {
				s.WorkflowRunURL += "/attempts/" + a
			}
		}
	}
	if *s == (manifest.BuildSource{}) {
		return nil
	}
	return s
}
