package cdn

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
)

// DefaultConcurrency is the default bound on assets checked at once.
const DefaultConcurrency = 32

// DefaultTLSWarn is how close to its expiry a certificate gives a warning.
const DefaultTLSWarn = 14 * 24 * time.Hour

// Options configure a Check. The zero value checks every file with a
// default client.
type Options struct {
	// Client sends every request; nil means a client with the default
	// policy that indexes no header in HTTP/2 (every request has a path
	// of its own: transport.WithoutHeaderIndexing) and sends plain-HTTP/1.1
	// HEADs on connections of its own (transport.WithLeanHeads). Its per-host cap
	// bounds the requests in flight to each CDN host, whatever
	// Concurrency says.
	Client *transport.Client
	// Full downloads and hashes every byte instead of trusting headers,
	// reading at most the recorded size plus one byte of each asset.
	Full bool
	// RequireContent refuses to call an asset verified on its size alone:
	// with no checksum header (and no Full), its check is StatusSizeOnly
	// and Report.Err is an *verdict.UnavailableError (exit 3).
	RequireContent bool
	// Paths, if set, are checked always; Sample more are drawn at random
	// from the rest. With Sample alone, Sample files are drawn; with
	// neither, every file is checked.
	Paths  []string
	Sample int
	// Seed, if non-zero, makes the sample repeatable.
	Seed uint64
	// AllFiles checks every file even when Paths or Sample is set.
	AllFiles bool
	// Concurrency bounds the checks in flight (default DefaultConcurrency).
	Concurrency int
	// Origin, if set, overrides the manifest's assets.origin.
	Origin string
	// Resolver resolves names to compare the origin with the CDN; nil is
	// net.DefaultResolver.
	Resolver Resolver
	// IgnoreETag stops a strong ETag that looks like a SHA-256 from being
	// compared with the recorded hash (for a CDN whose ETag hashes
	// something else).
	IgnoreETag bool
	// TLSWarn is how close to its expiry a certificate gives a warning
	// (default DefaultTLSWarn, 14 days).
	TLSWarn time.Duration
	// Now is the clock for certificate expiry; nil is time.Now.
	Now func() time.Time
	// Logger receives progress at debug level; nil is silent.
	Logger *slog.Logger
	// Progress, if set, is called after each check with done and total.
	Progress func(done, total int)
	// Stream, if set, receives the report in JSON while the check runs:
	// the same bytes as the Report's Write in "json", each result written
	// as soon as it and every result before it are decided. Nothing is
	// written when Check returns no Report; an error writing it is
	// returned with the Report.
	Stream io.Writer
}

// Check checks the assets against every CDN base: for each asset and base,
// that the CDN serves it (200), at its recorded size, with its recorded
// hash where the CDN states one (or, with Full, where the bytes hash to
// it). A file without a content hash in its name (robots.txt,
// favicon.svg, index.html: see assets.NameHash) is downloaded and hashed
// even without Full, up to MaxUnhashedBytes: a change at the same size
// keeps its name and would slip past a header check. Per-asset failures are in the Report (see Report.Err); Check's own
// error is for a check that could not start: an *OriginError (or another
// *manifest.ValidationError) for an origin that is the CDN, an error for a
// path not in the manifest or a bad CDN base.
func Check(ctx context.Context, a manifest.Assets, opt Options) (*Report, error) {
	start := time.Now()
	client := opt.Client
	if client == nil {
		client = transport.New(transport.DefaultPolicy(), transport.WithoutHeaderIndexing(), transport.WithLeanHeads())
	}
	logger := opt.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	rep := &Report{Full: opt.Full, RequireContent: opt.RequireContent, Bases: a.CDN}
	origin := opt.Origin
	if origin == "" {
		origin = a.Origin
	}
	if origin != "" {
		r := opt.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		oc, err := checkOrigin(ctx, origin, a.CDN, r)
		if err != nil {
			return nil, err
		}
		rep.Origin = oc
	}
	files, err := selectFiles(a, opt)
	if err != nil {
		return nil, err
	}
	rep.Files = len(files)
	rep.Sampled = len(files) < len(onCDN(a.Files))
	type job struct {
		f   manifest.File
		url string
	}
	jobs := make([]job, 0, len(a.CDN)*len(files))
	for _, base := range a.CDN {
		b, err := baseURL(base)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			jobs = append(jobs, job{f, b.ResolveReference(&url.URL{Path: f.Path}).String()})
		}
	}
	before := client.Stats()
	seen := map[string]bool{}
	for _, c := range client.Certificates() {
		seen[c.Host] = true
	}
	ck := &checker{hc: client.HTTPClient(), full: opt.Full, etag: !opt.IgnoreETag, ua: client.Policy().UserAgent, requireContent: opt.RequireContent}
	debug := logger.Enabled(ctx, slog.LevelDebug)
	n := opt.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	results := make([]Result, len(jobs))
	var stream *jsonStream
	var decided chan int
	streamed := make(chan struct{})
	if opt.Stream != nil {
		stream = newJSONStream(opt.Stream)
		stream.begin(rep)
		// Room for every index: a slow reader of the stream never holds a
		// request back (nor counts in the check's duration).
		decided = make(chan int, len(jobs))
		go func() {
			defer close(streamed)
			emitInOrder(decided, len(jobs), func(i int) { stream.result(&results[i]) })
		}()
	}
	type work struct {
		i     int
		first *firstConn // set on the first request to a base
	}
	next := make(chan work)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range min(n, len(jobs)) {
		wg.Go(func() {
			for w := range next {
				i, actx := w.i, ctx
				if w.first != nil {
					actx = w.first.trace(ctx)
				}
				results[i] = ck.check(actx, jobs[i].f, jobs[i].url)
				if w.first != nil {
					w.first.open()
				}
				if r := results[i]; debug {
					logger.Debug("checked", "path", r.Path, "url", r.URL, "status", r.Status, "reason", r.Reason)
				}
				if decided != nil {
					decided <- i
				}
				if opt.Progress != nil {
					mu.Lock()
					done++
					opt.Progress(done, len(jobs))
					mu.Unlock()
				}
			}
		})
	}
	for i := range jobs {
		if i%len(files) == 0 { // the first of a base's jobs (jobs is base by base)
			first := newFirstConn()
			next <- work{i, first}
			first.wait(ctx)
			continue
		}
		next <- work{i: i}
	}
	close(next)
	wg.Wait()
	rep.Results = results

	hosts := map[string]bool{}
	for _, base := range a.CDN {
		if u, err := url.Parse(base); err == nil {
			hosts[u.Host] = true
		}
	}
	warn := opt.TLSWarn
	if warn <= 0 {
		warn = DefaultTLSWarn
	}
	for _, c := range client.Certificates() {
		if hosts[c.Host] || !seen[c.Host] {
			rep.TLS = append(rep.TLS, endpointOf(c, now(), warn))
		}
	}
	after := client.Stats()
	rep.summarize(after.Requests-before.Requests, after.Retries-before.Retries, time.Since(start))
	if stream != nil {
		close(decided)
		<-streamed
		if err := stream.end(rep); err != nil {
			return rep, fmt.Errorf("writing the report: %w", err)
		}
	}
	return rep, nil
}

// emitInOrder receives the indexes of decided results, each of 0..n-1
// once in any order, and calls emit for each in ascending order, as soon
// as every one before it has come.
func emitInOrder(decided <-chan int, n int, emit func(int)) {
	ready := make([]bool, n)
	next := 0
	for i := range decided {
		ready[i] = true
		for next < n && ready[next] {
			emit(next)
			next++
		}
	}
}

// selectFiles returns the files to check, sorted by path. Every file, or
// the sample, leaves out the files the instance serves
// (manifest.File.Served): the CDN does not serve them. A path asked for
// by name is checked wherever it is served.
func selectFiles(a manifest.Assets, opt Options) ([]manifest.File, error) {
	if opt.AllFiles || (len(opt.Paths) == 0 && opt.Sample <= 0) {
		return onCDN(a.Files), nil
	}
	var files []manifest.File
	always := map[string]bool{}
	for _, p := range opt.Paths {
		f, ok := a.File(p)
		if !ok {
			return nil, fmt.Errorf("asset %q is not in the manifest", p)
		}
		if !always[p] {
			always[p] = true
			files = append(files, f)
		}
	}
	if opt.Sample > 0 {
		var rest []manifest.File
		for _, f := range a.Files {
			if !always[f.Path] && f.OnCDN() {
				rest = append(rest, f)
			}
		}
		seed1, seed2 := opt.Seed, opt.Seed^0x9e3779b97f4a7c15
		if opt.Seed == 0 {
			seed1, seed2 = rand.Uint64(), rand.Uint64()
		}
		rng := rand.New(rand.NewPCG(seed1, seed2))
		k := min(opt.Sample, len(rest))
		for i := range k {
			j := i + rng.IntN(len(rest)-i)
			rest[i], rest[j] = rest[j], rest[i]
		}
		files = append(files, rest[:k]...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// onCDN returns the files the CDN serves: files less those the instance
// serves, files itself when there are none of those.
func onCDN(files []manifest.File) []manifest.File {
	i := slices.IndexFunc(files, func(f manifest.File) bool { return !f.OnCDN() })
	if i < 0 {
		return files
	}
	out := slices.Clone(files[:i])
	for _, f := range files[i:] {
		if f.OnCDN() {
			out = append(out, f)
		}
	}
	return out
}

// baseURL parses a CDN base as a directory, for asset paths to be resolved
// against it (escaped) with ResolveReference.
func baseURL(base string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSuffix(base, "/") + "/")
	if err != nil {
		return nil, fmt.Errorf("CDN base %q: %w", base, err)
	}
	return u, nil
}
