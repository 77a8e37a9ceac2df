package admission_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/scenario"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

// BenchmarkClosure is the boot gate's default check of the closure (what
// the probed page's references load, by the manifest's asset graph) beside
// --all-assets, on a build of 10,000 assets ($LOCKSTEP_BENCH_ASSETS): the
// page references 10 of them, whose closure is a tenth of the build (a
// 10-ary tree of 1,000 assets: an app's chunks, styles, fonts and images;
// the rest are other pages', public and legacy files). The CDN is a
// loopback HTTP server whose connections count the bytes both ways. It
// reports the p50 and p99 of a whole check, the requests sent and the CDN
// bytes per check; bench/closure.sh runs both interleaved.
//
//	closure:    admit's default, the closure (1,000 HEADs)
//	all-assets: --all-assets (10,000 HEADs)
func BenchmarkClosure(b *testing.B) {
	n := 10000
	if s := os.Getenv("LOCKSTEP_BENCH_ASSETS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 100 {
			b.Fatalf("LOCKSTEP_BENCH_ASSETS=%q: want a number of at least 100", s)
		}
	}
	files := scenario.Assets("bench", n)
	var cdnBytes atomic.Int64
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

	m, _, err := scenario.Manifest("store-web", 1, []manifest.Image{webImage()}, []string{cdn.URL + "/"}, files)
	if err != nil {
		b.Fatal(err)
	}
	if n%7919 == 0 {
		b.Fatalf("LOCKSTEP_BENCH_ASSETS=%d: a multiple of 7919 does not mix", n)
	}
	roots, closure := benchGraph(m, n/10)
	m.APIVersion = m.Version()
	raw, err := m.Encode()
	if err != nil {
		b.Fatal(err)
	}
	mpath := filepath.Join(b.TempDir(), "release.json")
	if err := os.WriteFile(mpath, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	page := scenario.Page(cdn.URL, roots)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(page))
	}))
	b.Cleanup(app.Close)

	for _, v := range []struct {
		name    string
		all     bool
		checked int
	}{{"closure", false, closure}, {"all-assets", true, n}} {
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
				if !d.Allowed || d.CDNChecked != v.checked || d.Closure == nil || d.Closure.Assets != closure {
					b.Fatalf("Allowed %v, CDNChecked %d (want %d), Closure %+v:\n%s", d.Allowed, d.CDNChecked, v.checked, d.Closure, dump(d))
				}
				reqs += d.Requests
				bytes += cdnBytes.Load() - before
			}
			report(b, lat, float64(reqs))
			b.ReportMetric(float64(bytes)/float64(len(lat)), "cdn-bytes/check")
		})
	}
}

// benchGraph gives the first size files of m (in an order that mixes
// their kinds) the loads of a 10-ary tree: the k-th loads the 10(k+1)-th
// to the 10(k+1)+9-th. It returns the tree's 10 roots and its size.
func benchGraph(m *manifest.Manifest, size int) (roots []string, closure int) {
	order := make([]int, len(m.Assets.Files))
	for i := range order {
		order[i] = (i * 7919) % len(order) // 7919 is prime: a permutation unless it divides the size
	}
	tree := order[:size]
	for k, fi := range tree {
		var loads []string
		for j := 10 * (k + 1); j < min(10*(k+1)+10, size); j++ {
			loads = append(loads, m.Assets.Files[tree[j]].Path)
		}
		slices.Sort(loads)
		m.Assets.Files[fi].Loads = loads
	}
	for _, fi := range tree[:10] {
		roots = append(roots, m.Assets.Files[fi].Path)
	}
	return roots, size
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
