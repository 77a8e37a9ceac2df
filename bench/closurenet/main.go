// Command closurenet serves bench/closure.sh: the build of a default boot
// gate's closure (scenario.ClosureBuild) written out for real servers, and
// many gates booting at once against one counting CDN.
//
//	closurenet write -assets N -cdn BASE -dir DIR
//	closurenet storm -assets N -gates G [-outage DURATION]
//
// write puts the build's files in DIR/cdn (what the CDN serves), the
// probed page in DIR/app/index.html (its references under BASE), the
// manifest in DIR/release.json, the running config digest admit is told
// in DIR/config.txt, and two curl configs of HEADs under BASE: the files a
// default gate checks on the CDN (DIR/closure.curl, the closure from every
// page) and every file (DIR/all.curl, what --all-assets checks). It prints
// the counts as "pages=P closure=C all=A".
//
// storm starts a loopback CDN that counts what reaches it, in 100 ms
// buckets, and an instance page, then runs G boot gates at once in this
// process, each with its own transport.Client (its own connections, retry
// budget and jittered backoff, as on G instances), each a default
// admission.Check of the same page. With -outage the CDN answers 503 (no
// Retry-After) to every request for that long from the first one it gets
// (the gates' probes of the instance come first). It prints
// one line:
//
//	storm gates=G outage=D closure=C requests=R per-gate=R/G retries=R-G*C (below 0 when gates gave up) peak-100ms=N
//	  peak-at-ms=T span-ms=S allowed=A unverified=U p50-ms=… p99-ms=…
//
// and, as comments, the refusing findings of the gates not admitted and
// the requests of every 100 ms bucket. G gates in one process share its
// CPUs: their timing is not that of G machines, but what each sends, and
// when its retries fall, is its own client's.
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

var (
	digest = manifest.MustParseDigest("sha256:" + strings.Repeat("2", 64))
	config = manifest.MustParseDigest("sha256:" + strings.Repeat("3", 64))
	image  = manifest.Image{Name: "web", Ref: "127.0.0.1:5000/web:v1", Repository: "127.0.0.1:5000/web", Digest: digest,
		MediaType: "application/vnd.oci.image.manifest.v1+json",
		Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: digest, Config: config}}}
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: closurenet write|storm [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "write":
		err = write(os.Args[2:])
	case "storm":
		err = storm(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q: want write or storm", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "closurenet:", err)
		os.Exit(1)
	}
}

// closurePaths are the files a default gate checks on the CDN: the
// closure of the probed page's references and of every page's loads.
func closurePaths(b *scenario.ClosureBuild) []string {
	seeds := slices.Clone(b.Probed)
	for _, p := range b.Manifest.Assets.Roots() {
		if f, ok := b.Manifest.Assets.File(p); ok {
			seeds = append(seeds, f.Loads...)
		}
	}
	return b.Manifest.Assets.Closure(seeds)
}

func write(args []string) error {
	fs := flag.NewFlagSet("write", flag.ExitOnError)
	n := fs.Int("assets", 10000, "assets in the build")
	cdn := fs.String("cdn", "", "the CDN base URL")
	dir := fs.String("dir", "", "the directory to write")
	fs.Parse(args)
	if *cdn == "" || *dir == "" {
		return fmt.Errorf("write needs -cdn and -dir")
	}
	base := strings.TrimSuffix(*cdn, "/") + "/"
	b, err := scenario.NewClosureBuild(*n, base, []manifest.Image{image})
	if err != nil {
		return err
	}
	if err := scenario.WriteFiles(filepath.Join(*dir, "cdn"), b.Files); err != nil {
		return err
	}
	if err := scenario.WriteFiles(filepath.Join(*dir, "app"), map[string]string{"index.html": scenario.Page(base, b.Probed)}); err != nil {
		return err
	}
	raw, err := b.Manifest.Encode()
	if err != nil {
		return err
	}
	closure := closurePaths(b)
	if len(closure) != b.Closure {
		return fmt.Errorf("the closure has %d files, the build says %d", len(closure), b.Closure)
	}
	out := map[string]string{"release.json": string(raw), "config.txt": config.String() + "\n",
		"closure.curl": curlConfig(base, closure), "all.curl": curlConfig(base, scenario.Paths(b.Files))}
	if err := scenario.WriteFiles(*dir, out); err != nil {
		return err
	}
	fmt.Printf("pages=%d closure=%d all=%d\n", b.Pages, b.Closure, b.All)
	return nil
}

// curlConfig is a curl -K file that asks for each path under base,
// discarding the bodies.
func curlConfig(base string, paths []string) string {
	var s strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&s, "url = \"%s%s\"\noutput = \"/dev/null\"\n", base, p)
	}
	return s.String()
}

func storm(args []string) error {
	fs := flag.NewFlagSet("storm", flag.ExitOnError)
	n := fs.Int("assets", 10000, "assets in the build")
	gates := fs.Int("gates", 1000, "gates booting at once")
	outage := fs.Duration("outage", 0, "the CDN answers 503 for this long from its first request")
	fs.Parse(args)

	var files map[string]string
	var start atomic.Int64 // unix nanoseconds of the storm's start
	const bucket = 100 * time.Millisecond
	var mu sync.Mutex
	buckets := map[int]int{}
	var requests atomic.Int64
	var first atomic.Int64 // unix nanoseconds of the first request the CDN got
	cdn := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UnixNano()
		first.CompareAndSwap(0, now)
		since := time.Duration(now - start.Load())
		requests.Add(1)
		mu.Lock()
		buckets[int(since/bucket)]++
		mu.Unlock()
		if time.Duration(now-first.Load()) < *outage {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		body, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if r.Method != http.MethodHead {
			w.Write([]byte(body))
		}
	}))
	cdn.Config.MaxHeaderBytes = 1 << 16
	cdn.Start()
	defer cdn.Close()
	b, err := scenario.NewClosureBuild(*n, cdn.URL+"/", []manifest.Image{image})
	if err != nil {
		return err
	}
	files = b.Files
	raw, err := b.Manifest.Encode()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "closurenet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	mpath := filepath.Join(dir, "release.json")
	if err := os.WriteFile(mpath, raw, 0o644); err != nil {
		return err
	}
	page := scenario.Page(cdn.URL, b.Probed)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(page))
	}))
	defer app.Close()

	lat := make([]time.Duration, *gates)
	var allowed, unverified atomic.Int64
	var kindsMu sync.Mutex
	kinds := map[string]int{} // the refusing findings of the gates not admitted
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for g := range *gates {
		wg.Go(func() {
			client := transport.New(transport.DefaultPolicy())
			<-ready
			t0 := time.Now()
			d := admission.Check(context.Background(), admission.Config{
				CDN:    cdngate.Checker{},
				Source: manifest.FileSource{Path: mpath}, AllowUnsigned: true, Image: "web",
				Running: running.Given{Value: config.String()}, Platform: "linux/amd64",
				Probes: []string{app.URL + "/"}, Client: client,
			})
			lat[g] = time.Since(t0)
			if d.Allowed {
				allowed.Add(1)
			}
			if d.Unverified {
				unverified.Add(1)
			}
			if !d.Allowed {
				kindsMu.Lock()
				for _, f := range d.Refusals() {
					kinds[string(f.Kind)]++
				}
				kindsMu.Unlock()
			}
		})
	}
	start.Store(time.Now().UnixNano())
	close(ready)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	keys := make([]int, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	peak, peakAt := 0, 0
	for _, k := range keys {
		if buckets[k] > peak {
			peak, peakAt = buckets[k], k
		}
	}
	span := 0
	if len(keys) > 0 {
		span = (keys[len(keys)-1] - keys[0] + 1) * int(bucket/time.Millisecond)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Microseconds()) / 1000
	}
	r := requests.Load()
	fmt.Printf("storm gates=%d outage=%s closure=%d requests=%d per-gate=%.2f retries=%d peak-100ms=%d peak-at-ms=%d span-ms=%d allowed=%d unverified=%d p50-ms=%.1f p99-ms=%.1f\n",
		*gates, *outage, b.Closure, r, float64(r)/float64(*gates), r-int64(*gates*b.Closure), peak, peakAt*int(bucket/time.Millisecond), span,
		allowed.Load(), unverified.Load(), pct(0.5), pct(0.99))
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		fmt.Printf("# refused: %s %d\n", k, kinds[k])
	}
	for _, k := range keys {
		fmt.Printf("# %6d ms %7d requests\n", k*int(bucket/time.Millisecond), buckets[k])
	}
	return nil
}
