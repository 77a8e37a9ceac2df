package admission_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

// BenchmarkClosure is the boot gate's default check beside --all-assets,
// on scenario.ClosureBuild of 10,000 assets ($LOCKSTEP_BENCH_ASSETS): 20
// pages, each loading its own tree of 50 assets, a tenth of the build in
// all; the probed page references the first page's roots, and the default
// closure starts from every page (1,000 assets). The CDN is a loopback
// HTTP server whose connections count the bytes both ways. It reports the
// p50 and p99 of a whole check, the requests sent and the CDN bytes per
// check; bench/closure.sh runs both interleaved.
//
//	closure:    admit's default, the closure from every page (1,000 HEADs)
//	all-assets: --all-assets (10,020 HEADs)
func BenchmarkClosure(b *testing.B) {
	n := 10000
	if s := os.Getenv("LOCKSTEP_BENCH_ASSETS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 100 {
			b.Fatalf("LOCKSTEP_BENCH_ASSETS=%q: want a number of at least 100", s)
		}
	}
	var cdnBytes atomic.Int64
	var files map[string]string
	cdn := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	cdn.Listener = countingListener{cdn.Listener, &cdnBytes}
	cdn.Start()
	b.Cleanup(cdn.Close)

	build, err := scenario.NewClosureBuild(n, cdn.URL+"/", []manifest.Image{webImage()})
	if err != nil {
		b.Fatal(err)
	}
	files = build.Files
	raw, err := build.Manifest.Encode()
	if err != nil {
		b.Fatal(err)
	}
	mpath := filepath.Join(b.TempDir(), "release.json")
	if err := os.WriteFile(mpath, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	page := scenario.Page(cdn.URL, build.Probed)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(page))
	}))
	b.Cleanup(app.Close)

	for _, v := range []struct {
		name    string
		all     bool
		checked int
	}{{"closure", false, build.Closure}, {"all-assets", true, build.All}} {
		b.Run(v.name, func(b *testing.B) {
			var lat []time.Duration
			var reqs, bytes int64
			for b.Loop() {
				before := cdnBytes.Load()
				start := time.Now()
				// A fresh client each check, as on a booting instance.
				d := admission.Check(context.Background(), admission.Config{
					CDN:    cdngate.Checker{},
					Source: manifest.FileSource{Path: mpath}, AllowUnsigned: true, Image: "web",
					Running: running.Given{Value: amd64Conf.String()}, Platform: "linux/amd64",
					Probes: []string{app.URL + "/"}, AllAssets: v.all,
					Client: transport.New(transport.DefaultPolicy()),
				})
				lat = append(lat, time.Since(start))
				if !d.Allowed || d.CDNChecked != v.checked || d.Closure == nil || d.Closure.Assets != build.Closure {
					b.Fatalf("Allowed %v, CDNChecked %d (want %d), Closure %+v (want %d assets):\n%s", d.Allowed, d.CDNChecked, v.checked, d.Closure, build.Closure, dump(d))
				}
				reqs += d.Requests
				bytes += cdnBytes.Load() - before
			}
			report(b, lat, float64(reqs))
			b.ReportMetric(float64(bytes)/float64(len(lat)), "cdn-bytes/check")
		})
	}
}

// countingListener counts the bytes its connections read and write.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.n}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	k, err := c.Conn.Read(p)
	c.n.Add(int64(k))
	return k, err
}

func (c countingConn) Write(p []byte) (int, error) {
	k, err := c.Conn.Write(p)
	c.n.Add(int64(k))
	return k, err
}
