package admission

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

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

// cdn checks the served assets (and the sample) on the CDN. Assets that
// failed on TLS make no finding of their own: it returns their hosts
// (with a reason), for certificates to report once per endpoint.
//
// Without a CDNChecker it refuses (could-not-check) instead of skipping.
func (c *checker) cdn(ctx context.Context, m *manifest.Manifest, served []string) (tlsFailed map[string]string) {
	cfg := c.cfg
	if cfg.CDN == nil {
		c.add(Finding{Kind: KindDependencyUnreachable, Subject: "CDN",
			Message: "no CDN checker is configured (admission.Config.CDN is nil): the assets cannot be checked on the CDN"})
		return nil
	}
	var known, unknown []string
	isServed := map[string]bool{}
	for _, id := range served {
		isServed[id] = true
		if _, ok := m.Assets.File(id); ok {
			known = append(known, id)
		} else {
			unknown = append(unknown, id)
		}
	}
	paths := known
	switch {
	case cfg.AllAssets:
		paths = paths[:0:0]
		for _, f := range m.Assets.Files {
			paths = append(paths, f.Path)
		}
	case cfg.Sample > 0:
		var rest []string
		for _, f := range m.Assets.Files {
			if !isServed[f.Path] {
				rest = append(rest, f.Path)
			}
		}
		cfg.Rand.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		paths = append(append([]string(nil), known...), rest[:min(cfg.Sample, len(rest))]...)
		sort.Strings(paths)
	}
	var wg sync.WaitGroup
	if len(unknown) > 0 {
		wg.Go(func() { c.unlisted(ctx, m, unknown) })
	}
	if len(paths) > 0 {
		results, err := cfg.CDN.CheckAssets(ctx, CDNRequest{Assets: m.Assets, Paths: paths, Client: cfg.Client, Logger: cfg.Logger})
		if err != nil {
			c.unreachable("CDN", fmt.Errorf("checking the CDN: %w", err))
		} else {
			c.update(func(d *Decision) { d.CDNChecked += len(results) })
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
				if f := cdnFinding(r); f != nil {
					c.add(*f)
				}
			}
		}
	}
	wg.Wait()
	return tlsFailed
}

// cdnFinding turns a CDN result into a finding (nil for ok). A status
// this package does not know refuses, as could-not-check.
func cdnFinding(r AssetStatus) *Finding {
	f := &Finding{Subject: r.Path, Got: r.Reason, Message: fmt.Sprintf("%s at %s: %s", r.Status, r.URL, r.Reason)}
	switch r.Status {
	case CDNOK:
		return nil
	case CDNMissing:
		f.Kind, f.Want = KindAssetMissingOnCDN, "200"
		f.Message = fmt.Sprintf("%s is missing on the CDN: %s answers %s", r.Path, r.URL, r.Reason)
	case CDNWrongSize, CDNWrongContent:
		f.Kind, f.Want = KindAssetContentMismatch, "the recorded bytes"
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
