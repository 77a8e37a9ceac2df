package admission

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/lockstep-dev/lockstep/admission/probe"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
)

// CDNChecker is the CDN check the gate needs (Config.CDN): the given paths
// of the assets, on every one of their CDN bases, with the check's client.
// lockstep's is verify/cdn/cdngate.Checker, over verify/cdn; admission
// itself imports no verify package.
type CDNChecker interface {
	// CheckAssets returns one AssetStatus per path and base. Its error is
	// for a check that could not start (a bad base, an origin that is
	// the CDN): the gate refuses it as could-not-check.
	CheckAssets(ctx context.Context, req CDNRequest) ([]AssetStatus, error)
}

// CDNRequest is what the gate asks a CDNChecker to check.
type CDNRequest struct {
	// Assets are the manifest's assets: their files and CDN bases.
	Assets manifest.Assets
	// Paths are the files to check, each on every base.
	Paths []string
	// Client sends every request (Config.Client): its stats, retry budget
	// and certificates are the check's.
	Client *transport.Client
	// Logger receives progress (Config.Logger).
	Logger *slog.Logger
}

// CDNStatus classifies one asset at one base, with the values of
// verify/cdn's statuses.
type CDNStatus string

// The statuses the gate tells apart; any other (unreachable, size-only)
// refuses as a failed request (AssetStatus.Err).
const (
	CDNOK           CDNStatus = "ok"
	CDNMissing      CDNStatus = "missing"
	CDNWrongSize    CDNStatus = "wrong-size"
	CDNWrongContent CDNStatus = "wrong-content"
	CDNLoop         CDNStatus = "loop"
	CDNTLS          CDNStatus = "tls-error"
)

// AssetStatus is the check of one asset at one CDN base.
type AssetStatus struct {
	Path   string
	URL    string
	Status CDNStatus
	// Reason says why, in a few words (an HTTP status, a size).
	Reason string
	// Err is the failed request's error, if one failed.
	Err error
}

// cdn checks the closure of the served assets (see closure), or with the
// sample, or every asset, each where the manifest says it is served: on
// the CDN, or on the instance (File.Served, at Config.Instance or the
// first probe's origin); on the instance too the assets its pages
// reference on its own origin, with their closure (a browser fetches them
// there); and on the CDN too an instance-served asset a page references
// under a CDN base. Assets that failed on TLS make no finding of their
// own: it returns their hosts (with a reason), for certificates to report
// once per endpoint.
//
// Without a CDNChecker it refuses (could-not-check) instead of skipping.
func (c *checker) cdn(ctx context.Context, m *manifest.Manifest, served probe.Mapped) (tlsFailed map[string]string) {
	cfg := c.cfg
	if cfg.CDN == nil {
		c.add(Finding{Kind: KindDependencyUnreachable, Subject: "CDN",
			Message: "no CDN checker is configured (admission.Config.CDN is nil): the assets cannot be checked on the CDN"})
		return nil
	}
	if n := len(served.IDs); n > cfg.MaxReferences && !cfg.AllAssets {
		c.add(Finding{Kind: KindTooManyReferences, Subject: m.ID(), Got: fmt.Sprint(n), Want: fmt.Sprintf("at most %d", cfg.MaxReferences),
			Message: fmt.Sprintf("the probed pages reference %d assets, over the gate's bound of %d for one check: none was checked on the CDN (raise the bound, or check every asset)", n, cfg.MaxReferences)})
		return nil
	}
	var known, unknown []string
	for _, id := range served.IDs {
		if _, ok := m.Assets.File(id); ok {
			known = append(known, id)
		} else {
			unknown = append(unknown, id)
		}
	}
	closure, whole := c.closure(m, known)
	paths := closure
	switch {
	case cfg.AllAssets:
		paths = paths[:0:0]
		for _, f := range m.Assets.Files {
			paths = append(paths, f.Path)
		}
	case cfg.Sample > 0:
		inClosure := make(map[string]bool, len(closure))
		for _, p := range closure {
			inClosure[p] = true
		}
		var rest []string
		for _, f := range m.Assets.Files {
			if !inClosure[f.Path] {
				rest = append(rest, f.Path)
			}
		}
		cfg.Rand.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		paths = append(append([]string(nil), closure...), rest[:min(cfg.Sample, len(rest))]...)
		sort.Strings(paths)
	}
	// Each file where a browser fetches it: a file the instance serves
	// (File.Served) on the instance, the rest on the CDN. One the pages
	// reference under a CDN base is fetched there too.
	cdnPaths, instPaths := splitServed(m, paths)
	cdnPaths = append(cdnPaths, referencedOnCDN(m, served)...)
	slices.Sort(cdnPaths)
	cdnPaths = slices.Compact(cdnPaths)
	local := onInstance(m, served.Local, whole)
	if len(instPaths) > 0 {
		base, err := c.instanceBase()
		if err != nil {
			c.add(Finding{Kind: KindDependencyUnreachable, Subject: "instance", Got: fmt.Sprint(len(instPaths)),
				Message: fmt.Sprintf("%d assets of %s are served by the instance (%s first), and %v: they cannot be checked where a browser fetches them",
					len(instPaths), m.ID(), instPaths[0], err)})
		} else {
			local[base] = append(local[base], instPaths...)
		}
	}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	failedTLS := func(hosts map[string]string) {
		mu.Lock()
		defer mu.Unlock()
		for h, why := range hosts {
			if tlsFailed == nil {
				tlsFailed = map[string]string{}
			}
			tlsFailed[h] = why
		}
	}
	inClosure := make(map[string]bool, len(closure))
	for _, p := range closure {
		inClosure[p] = true
	}
	// Closure.Checked counts each path of the closure once, wherever it
	// was checked.
	checkedClosure := map[string]bool{}
	countClosure := func(results []AssetStatus) {
		mu.Lock()
		n := 0
		for _, r := range results {
			if inClosure[r.Path] && !checkedClosure[r.Path] {
				checkedClosure[r.Path] = true
				n++
			}
		}
		mu.Unlock()
		c.update(func(d *Decision) {
			if d.Closure != nil {
				d.Closure.Checked += n
			}
		})
	}
	if len(unknown) > 0 {
		wg.Go(func() { c.unlisted(ctx, m, unknown) })
	}
	for base, ids := range local {
		slices.Sort(ids)
		ids = slices.Compact(ids)
		wg.Go(func() {
			results, hosts := c.check(ctx, manifest.Assets{CDN: []string{base}, Files: m.Assets.Files}, ids, onTheInstance)
			c.update(func(d *Decision) { d.InstanceChecked += len(results) })
			countClosure(results)
			failedTLS(hosts)
		})
	}
	if len(cdnPaths) > 0 {
		results, hosts := c.check(ctx, m.Assets, cdnPaths, onTheCDN)
		c.update(func(d *Decision) { d.CDNChecked += len(results) })
		countClosure(results)
		failedTLS(hosts)
	}
	wg.Wait()
	return tlsFailed
}

// closure returns the closure of the known served IDs and of every root
// of the release (manifest.Assets.Roots: its pages, and the entry files a
// bundler's list names, File.Entry): every asset of the manifest they
// load, directly or not, by its asset graph, the IDs and the entry files
// included, the pages themselves only where the manifest says the
// instance serves them
// (File.Served; otherwise the probed ones were read there). A route that is not probed still makes a browser load its
// chunks, styles and fonts. With no graph (a v1 manifest) it is the IDs
// alone. When the closure adds more than Config.MaxClosure to the IDs
// (and not every asset is checked anyway) it refuses as could-not-check
// (closure-too-large) and returns the IDs alone, with whole false: the
// gate never checks part of a closure and calls it done. It records
// Decision.Closure when there are probes.
func (c *checker) closure(m *manifest.Manifest, known []string) (paths []string, whole bool) {
	cfg := c.cfg
	seeds := known
	var pages []string
	entries := 0
	if len(cfg.Probes) > 0 {
		pages = m.Assets.Roots()
		seeds = slices.Clone(known)
		for _, p := range pages {
			f, ok := m.Assets.File(p)
			if !ok {
				continue
			}
			seeds = append(seeds, f.Loads...)
			if f.Entry {
				// A browser loads an entry file itself (a server renders
				// its tag), not only what it loads.
				seeds = append(seeds, p)
				entries++
			}
		}
	}
	all := m.Assets.Closure(seeds)
	// A page the manifest says the instance serves (File.Served, recorded
	// by --instance-path or --cdn-path) is checked there too: a browser
	// on another page fetches it (Next.js's router prefetches each linked
	// route's document and RSC payloads; Angular's service worker, the
	// app shell), so its absence breaks the release as a chunk's would.
	for _, p := range pages {
		if f, ok := m.Assets.File(p); ok && f.Served != "" && f.OnInstance() {
			all = append(all, p)
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	if len(cfg.Probes) > 0 {
		graph := slices.ContainsFunc(m.Assets.Files, func(f manifest.File) bool { return len(f.Loads) > 0 })
		c.update(func(d *Decision) {
			d.Closure = &Closure{Graph: graph, Referenced: len(known), Roots: len(pages), Entries: entries, Assets: len(all), Max: cfg.MaxClosure}
		})
	}
	added := len(all) - len(known)
	if cfg.AllAssets || added <= cfg.MaxClosure {
		return all, true
	}
	c.add(Finding{Kind: KindClosureTooLarge, Subject: m.ID(), Got: fmt.Sprint(added), Want: fmt.Sprintf("at most %d", cfg.MaxClosure),
		Message: fmt.Sprintf("the %d served assets and the %d roots (pages and entry files) of %s load %d more by its asset graph, over the gate's bound of %d: only the references were checked, and what a browser loads next is unverified (raise the bound, or check every asset)",
			len(known), len(pages), m.ID(), added, cfg.MaxClosure)})
	return known, false
}

// onInstance groups the known assets the pages reference on the
// instance's own origin by the base they are under, each with its closure
// (whole) or alone: a browser fetches what such an asset loads, by a
// relative URL, from the instance as well.
func onInstance(m *manifest.Manifest, local []probe.Local, whole bool) map[string][]string {
	roots := map[string][]string{}
	for _, l := range local {
		if _, ok := m.Assets.File(l.ID); ok {
			roots[l.Base] = append(roots[l.Base], l.ID)
		}
	}
	if whole {
		for base, ids := range roots {
			roots[base] = m.Assets.Closure(ids)
		}
	}
	return roots
}

// splitServed splits paths into those the CDN serves and those the
// instance serves (File.Served); a file both serve is in both.
func splitServed(m *manifest.Manifest, paths []string) (cdn, instance []string) {
	for _, p := range paths {
		f, ok := m.Assets.File(p)
		if !ok || f.OnCDN() {
			cdn = append(cdn, p)
		}
		if ok && f.OnInstance() {
			instance = append(instance, p)
		}
	}
	return cdn, instance
}

// referencedOnCDN returns the files the instance serves that a page
// references other than on its own origin (under a CDN base): a browser
// fetches them from the CDN, where they must be as well.
func referencedOnCDN(m *manifest.Manifest, served probe.Mapped) []string {
	local := map[string]bool{}
	for _, l := range served.Local {
		local[l.ID] = true
	}
	var out []string
	for _, id := range served.IDs {
		if f, ok := m.Assets.File(id); ok && !f.OnCDN() && !local[id] {
			out = append(out, id)
		}
	}
	return out
}

// instanceBase is the base URL the instance serves its own files under:
// Config.Instance, or the root of the first probe's origin.
func (c *checker) instanceBase() (string, error) {
	raw := c.cfg.Instance
	if raw == "" {
		if len(c.cfg.Probes) == 0 {
			return "", errors.New("no probe or instance base says where the instance is")
		}
		u, err := url.Parse(c.cfg.Probes[0])
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("the probe %q names no host", c.cfg.Probes[0])
		}
		raw = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}).String()
	}
	if err := manifest.ValidateBaseURL(raw); err != nil {
		return "", fmt.Errorf("the instance base is not a base URL: %w", err)
	}
	return strings.TrimSuffix(raw, "/") + "/", nil
}

// Where a check is made, as its findings say it.
const (
	onTheCDN      = "the CDN"
	onTheInstance = "the instance"
)

// check checks paths on the bases of a with the CDNChecker, where is
// onTheCDN or onTheInstance, and records the findings. Results that failed
// on TLS make no finding: their hosts are returned, with a reason.
func (c *checker) check(ctx context.Context, a manifest.Assets, paths []string, where string) ([]AssetStatus, map[string]string) {
	results, err := c.cfg.CDN.CheckAssets(ctx, CDNRequest{Assets: a, Paths: paths, Client: c.cfg.Client, Logger: c.cfg.Logger})
	if err != nil {
		c.unreachable(strings.TrimPrefix(where, "the "), fmt.Errorf("checking %s: %w", where, err))
		return nil, nil
	}
	var tlsFailed map[string]string
	for _, r := range results {
		if r.Status == CDNTLS {
			if u, err := url.Parse(r.URL); err == nil {
				if tlsFailed == nil {
					tlsFailed = map[string]string{}
				}
				tlsFailed[u.Host] = r.Reason
				continue
			}
		}
		if f := cdnFinding(r, where); f != nil {
			c.add(*f)
		}
	}
	return results, tlsFailed
}

// cdnFinding turns a result of a check made at where into a finding (nil
// for ok). A status this package does not know refuses, as
// could-not-check.
func cdnFinding(r AssetStatus, where string) *Finding {
	f := &Finding{Subject: r.Path, Got: r.Reason, Message: fmt.Sprintf("%s at %s: %s", r.Status, r.URL, r.Reason)}
	switch r.Status {
	case CDNOK:
		return nil
	case CDNMissing:
		f.Kind, f.Want = KindAssetMissingOnCDN, "200"
		if where == onTheInstance {
			f.Kind = KindAssetMissingOnInstance
		}
		f.Message = fmt.Sprintf("%s is missing on %s: %s answers %s", r.Path, where, r.URL, r.Reason)
	case CDNWrongSize, CDNWrongContent:
		f.Kind, f.Want = KindAssetContentMismatch, "the recorded bytes"
		if where == onTheInstance {
			f.Message = fmt.Sprintf("%s on the instance at %s: %s", r.Status, r.URL, r.Reason)
		}
	case CDNLoop:
		f.Kind = KindCDNLoop
	default:
		f.Kind = requestKind(r.Err)
	}
	return f
}

// unlisted checks served assets that the manifest lacks: present on the
// CDN or not (their content cannot be checked).
func (c *checker) unlisted(ctx context.Context, m *manifest.Manifest, ids []string) {
	hc := c.cfg.Client.HTTPClient()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, base := range m.Assets.CDN {
		for _, id := range ids {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				u := strings.TrimSuffix(base, "/") + "/" + (&url.URL{Path: id}).EscapedPath()
				req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
				if err != nil {
					c.unreachable("CDN", err)
					return
				}
				resp, err := hc.Do(req)
				c.update(func(d *Decision) { d.CDNChecked++ })
				if err != nil {
					var le *transport.LoopError
					if errors.As(err, &le) {
						c.add(Finding{Kind: KindCDNLoop, Subject: id, Message: le.Error()})
						return
					}
					c.unreachable("CDN "+u, err)
					return
				}
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
				case http.StatusForbidden, http.StatusNotFound, http.StatusGone:
					c.add(Finding{Kind: KindAssetMissingOnCDN, Subject: id, Got: resp.Status, Want: "200",
						Message: fmt.Sprintf("%s is missing on the CDN: %s answers %s", id, u, resp.Status)})
				default:
					c.unreachable("CDN "+u, fmt.Errorf("HEAD %s: %s", u, resp.Status))
				}
			}()
		}
	}
	wg.Wait()
}
