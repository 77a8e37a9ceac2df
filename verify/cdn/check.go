package cdn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify"
)

// Status classifies one asset's check. The values are stable in JSON.
type Status string

// The statuses.
const (
	StatusOK           Status = "ok"
	StatusMissing      Status = "missing"       // 403, 404, 410
	StatusWrongSize    Status = "wrong-size"    // 200 with another length
	StatusWrongContent Status = "wrong-content" // a checksum or the bytes differ
	StatusUnreachable  Status = "unreachable"   // after retries
	StatusLoop         Status = "loop"          // redirect or CDN-Loop loop
)

// Options configure a Check.
type Options struct {
	// Client sends every request; nil means a client with the default
	// policy.
	Client *transport.Client
	// Full downloads and hashes every byte instead of trusting headers.
	Full bool
	// Paths, if set, are checked always; Sample more are drawn at random
	// from the rest. With neither, every file is checked.
	Paths  []string
	Sample int
	// AllFiles checks every file even when Paths is set.
	AllFiles bool
	// Concurrency bounds requests in flight (default 32).
	Concurrency int
	// Logger receives progress; nil is silent.
	Logger *slog.Logger
	// Progress, if set, is called after each asset with done and total.
	Progress func(done, total int)
}

// Result is the check of one asset at one CDN base.
type Result struct {
	Path       string `json:"path"`
	URL        string `json:"url"`
	Status     Status `json:"status"`
	HTTPStatus int    `json:"httpStatus,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// Summary counts a Check.
type Summary struct {
	Checked     int           `json:"checked"`
	OK          int           `json:"ok"`
	Missing     int           `json:"missing"`
	Wrong       int           `json:"wrong"`
	Unreachable int           `json:"unreachable"`
	Loops       int           `json:"loops"`
	Requests    int64         `json:"requests"`
	Retries     int64         `json:"retries"`
	Duration    time.Duration `json:"durationNanos"`
}

// Report is the outcome of a Check.
type Report struct {
	Results []Result `json:"results"`
	Summary Summary  `json:"summary"`
}

// Failed returns the results that are not ok.
func (r *Report) Failed() []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Status != StatusOK {
			out = append(out, res)
		}
	}
	return out
}

// Err returns a *verify.MismatchError for the first missing or wrong asset,
// an *verify.UnavailableError when every asset was unreachable, or nil.
func (r *Report) Err() error {
	for _, res := range r.Results {
		switch res.Status {
		case StatusMissing, StatusWrongSize, StatusWrongContent, StatusLoop:
			return &verify.MismatchError{Subject: "asset " + res.Path, Reason: string(res.Status) + " at " + res.URL, Got: res.Reason, Want: "the recorded bytes"}
		}
	}
	if r.Summary.Checked > 0 && r.Summary.Unreachable == r.Summary.Checked {
		return &verify.UnavailableError{Dependency: "CDN", Err: errors.New(r.Results[0].Reason)}
	}
	return nil
}

// Check checks the assets against every CDN base. Its error is for a
// check that could not run at all; per-asset failures are in the Report.
func Check(ctx context.Context, a manifest.Assets, opt Options) (*Report, error) {
	start := time.Now()
	client := opt.Client
	if client == nil {
		client = transport.New(transport.DefaultPolicy())
	}
	before := client.Stats()
	files := a.Files
	if len(opt.Paths) > 0 && !opt.AllFiles {
		files = nil
		for _, p := range opt.Paths {
			f, ok := a.File(p)
			if !ok {
				return nil, fmt.Errorf("asset %q is not in the manifest", p)
			}
			files = append(files, f)
		}
	}
	type job struct {
		f   manifest.File
		url string
	}
	var jobs []job
	for _, base := range a.CDN {
		for _, f := range files {
			u, err := assetURL(base, f.Path)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, job{f, u})
		}
	}
	n := opt.Concurrency
	if n <= 0 {
		n = 32
	}
	results := make([]Result, len(jobs))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	hc := client.HTTPClient()
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = checkOne(ctx, hc, j.f, j.url)
			if opt.Progress != nil {
				mu.Lock()
				done++
				opt.Progress(done, len(jobs))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	rep := &Report{Results: results}
	for _, r := range results {
		rep.Summary.Checked++
		switch r.Status {
		case StatusOK:
			rep.Summary.OK++
		case StatusMissing:
			rep.Summary.Missing++
		case StatusWrongSize, StatusWrongContent:
			rep.Summary.Wrong++
		case StatusUnreachable:
			rep.Summary.Unreachable++
		case StatusLoop:
			rep.Summary.Loops++
		}
	}
	after := client.Stats()
	rep.Summary.Requests = after.Requests - before.Requests
	rep.Summary.Retries = after.Retries - before.Retries
	rep.Summary.Duration = time.Since(start)
	return rep, nil
}

func checkOne(ctx context.Context, hc *http.Client, f manifest.File, u string) Result {
	res := Result{Path: f.Path, URL: u}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
	if err != nil {
		res.Status, res.Reason = StatusUnreachable, err.Error()
		return res
	}
	resp, err := hc.Do(req)
	if err != nil {
		var le *transport.LoopError
		if errors.As(err, &le) {
			res.Status, res.Reason = StatusLoop, le.Error()
		} else {
			res.Status, res.Reason = StatusUnreachable, err.Error()
		}
		return res
	}
	resp.Body.Close()
	res.HTTPStatus = resp.StatusCode
	switch {
	case resp.StatusCode == http.StatusForbidden, resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusGone:
		res.Status, res.Reason = StatusMissing, resp.Status
	case resp.StatusCode != http.StatusOK:
		res.Status, res.Reason = StatusUnreachable, resp.Status
	case resp.ContentLength >= 0 && resp.ContentLength != f.Size:
		res.Status, res.Reason = StatusWrongSize, fmt.Sprintf("%d bytes, want %d", resp.ContentLength, f.Size)
	default:
		res.Status = StatusOK
	}
	return res
}

// assetURL joins a CDN base and an asset path.
func assetURL(base, path string) (string, error) {
	u, err := url.Parse(strings.TrimSuffix(base, "/") + "/")
	if err != nil {
		return "", fmt.Errorf("CDN base %q: %w", base, err)
	}
	ref := &url.URL{Path: path}
	return u.ResolveReference(ref).String(), nil
}
