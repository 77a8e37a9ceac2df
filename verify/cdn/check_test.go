package cdn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

const body = "console.log('lockstep');\n"

// faultCDN is a CDN that switches on the path: each path shows one
// behaviour. Every asset's recorded bytes are body unless it says so.
func faultCDN(t *testing.T) (*httptest.Server, manifest.Assets) {
	t.Helper()
	var n429, n503 atomic.Int64
	files := map[string]string{}
	mux := http.NewServeMux()
	handle := func(path string, h http.HandlerFunc) {
		files[path] = body
		mux.HandleFunc("/"+path, h)
	}
	serve := func(content string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			http.ServeContent(w, r, "", time.Time{}, strings.NewReader(content))
		}
	}
	handle("ok.js", serve(body))
	handle("missing.js", http.NotFound)
	handle("forbidden.js", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) })
	handle("gone.js", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(410) })
	handle("error.js", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	handle("longer.js", serve(body+"more"))
	handle("same-size.1f3cab88.js", serve(strings.ToUpper(body)))
	handle("rate-limited.js", func(w http.ResponseWriter, r *http.Request) {
		if n429.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			return
		}
		serve(body)(w, r)
	})
	handle("burst.js", func(w http.ResponseWriter, r *http.Request) {
		if n503.Add(1) <= 2 {
			w.WriteHeader(503)
			return
		}
		serve(body)(w, r)
	})
	handle("down.js", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	handle("stall.js", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	handle("reset.js", func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}
	})
	handle("redirect-loop.js", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/redirect-loop-b", http.StatusFound)
	})
	mux.HandleFunc("/redirect-loop-b", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/redirect-loop.js", http.StatusFound)
	})
	handle("hops.js", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/hop/3", http.StatusMovedPermanently)
	})
	handle("redirected.js", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok.js", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if n == 0 {
			serve(body)(w, r)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusMovedPermanently)
	})
	handle("cdn-loop.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("CDN-Loop", "cloudfront, fastly")
		w.Header().Add("CDN-Loop", "Cloudfront; host=x")
		serve(body)(w, r)
	})
	handle("no-head.js", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.WriteHeader(405)
			return
		}
		serve(body)(w, r)
	})
	handle("no-head-wrong.js", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.WriteHeader(501)
			return
		}
		serve(body+"x")(w, r)
	})
	handle("chunked-head.js", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			return // no Content-Length
		}
		serve(body)(w, r)
	})
	withHeader := func(path, key, value, content string) {
		handle(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(key, value)
			serve(content)(w, r)
		})
	}
	withHeader("amz.js", "x-amz-checksum-sha256", sha64(body), body)
	withHeader("amz-wrong.1f3cab88.js", "x-amz-checksum-sha256", sha64(strings.ToUpper(body)), strings.ToUpper(body))
	withHeader("amz-composite.js", "x-amz-checksum-sha256", sha64("x")+"-3", body)
	withHeader("etag-hex.js", "ETag", `"`+strings.ToUpper(sha(body))+`"`, body)
	withHeader("etag-wrong.js", "ETag", `"`+sha("other")+`"`, body)
	withHeader("etag-weak.js", "ETag", `W/"`+sha("other")+`"`, body)
	withHeader("etag-md5.js", "ETag", `"d41d8cd98f00b204e9800998ecf8427e"`, body)
	withHeader("etag-b64.js", "ETag", `"`+sha64(body)+`"`, body)
	withHeader("digest.js", "Digest", "md5=xyz, SHA-256="+sha64(body), body)
	withHeader("digest-wrong.js", "Digest", "sha-256="+sha64("other"), body)
	withHeader("repr-digest.js", "Repr-Digest", "sha-512=:AAAA:, sha-256=:"+sha64(body)+":", body)
	withHeader("repr-digest-wrong.js", "Repr-Digest", "sha-256=:"+sha64("other")+":", body)
	files["empty.txt"] = ""
	mux.HandleFunc("/empty.txt", serve(""))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, assets(files, srv.URL+"/")
}

func fastClient() *transport.Client {
	p := transport.DefaultPolicy()
	// The timeout is what stall.js meets (four attempts of it); every other
	// request of the fault CDN answers at once. It was 300 ms, and a run
	// under -race at load 10 had every request of TestCheckFaults time out
	// (the host's 16 connections queue behind the slow answers, and the
	// queue counts against each attempt's timeout); a second is three
	// times that margin for about three more seconds of stall.
	p.BaseDelay, p.MaxDelay, p.Timeout = time.Millisecond, 10*time.Millisecond, time.Second
	// The fault CDN fails on purpose in six ways on one host: without a
	// budget or a breaker, each asset's own outcome is what is tested.
	p.RetryFloor, p.BreakerFailures = 100, -1
	return transport.New(p)
}

func TestCheckFaults(t *testing.T) {
	t.Parallel() // its own fault CDN; most of its time is stall.js timing out
	_, a := faultCDN(t)
	type want struct {
		status   Status
		verified string
		reason   string
	}
	cases := map[string]want{
		"ok.js":                 {StatusOK, "", ""},
		"empty.txt":             {StatusOK, "", ""},
		"missing.js":            {StatusMissing, "", "404"},
		"forbidden.js":          {StatusMissing, "", "403"},
		"gone.js":               {StatusMissing, "", "410"},
		"error.js":              {StatusUnreachable, "", "500"},
		"longer.js":             {StatusWrongSize, "", "29 bytes, want 25"},
		"same-size.1f3cab88.js": {StatusOK, "", ""}, // only --full or a checksum header can tell
		"rate-limited.js":       {StatusOK, "", ""},
		"burst.js":              {StatusOK, "", ""},
		"down.js":               {StatusUnreachable, "", "503"},
		"stall.js":              {StatusUnreachable, "", "timed out"},
		"reset.js":              {StatusUnreachable, "", "reset"},
		"redirect-loop.js":      {StatusLoop, "", "revisits"},
		"hops.js":               {StatusLoop, "", "more than 3 redirects"},
		"redirected.js":         {StatusOK, "", ""},
		"cdn-loop.js":           {StatusLoop, "", "CDN-Loop names cloudfront more than once"},
		"no-head.js":            {StatusOK, "", ""},
		"no-head-wrong.js":      {StatusWrongSize, "", "26 bytes, want 25"},
		"chunked-head.js":       {StatusOK, "", ""},
		"amz.js":                {StatusOK, "x-amz-checksum-sha256", ""},
		"amz-wrong.1f3cab88.js": {StatusWrongContent, "", "x-amz-checksum-sha256 says"},
		"amz-composite.js":      {StatusOK, "", ""},
		"etag-hex.js":           {StatusOK, "etag", ""},
		"etag-b64.js":           {StatusOK, "etag", ""},
		"etag-wrong.js":         {StatusWrongContent, "", "etag says"},
		"etag-weak.js":          {StatusOK, "", ""},
		"etag-md5.js":           {StatusOK, "", ""},
		"digest.js":             {StatusOK, "digest", ""},
		"digest-wrong.js":       {StatusWrongContent, "", "digest says"},
		"repr-digest.js":        {StatusOK, "repr-digest", ""},
		"repr-digest-wrong.js":  {StatusWrongContent, "", "repr-digest says"},
	}
	if len(cases) != len(a.Files) {
		t.Fatalf("%d cases for %d files", len(cases), len(a.Files))
	}
	for _, full := range []bool{false, true} {
		rep, err := Check(context.Background(), a, Options{Client: fastClient(), Full: full})
		if err != nil {
			t.Fatal(err)
		}
		got := byPath(rep)
		for path, w := range cases {
			if full {
				switch path {
				case "same-size.1f3cab88.js", "amz-wrong.1f3cab88.js":
					w = want{StatusWrongContent, "", "the bytes hash to"}
				case "no-head-wrong.js":
					w = want{StatusWrongSize, "", "26 bytes, want 25"}
				case "ok.js", "empty.txt":
					w.verified = "body"
				}
			}
			r := got[path]
			if r.Status != w.status || !strings.Contains(r.Reason, w.reason) || (w.verified != "" && !strings.Contains(strings.Join(r.Verified, ","), w.verified)) {
				t.Errorf("full=%v %s: %s (%q, verified by %v), want %s (%q, verified by %q)", full, path, r.Status, r.Reason, r.Verified, w.status, w.reason, w.verified)
			}
		}
		s := rep.Summary
		if s.Checked != len(cases) || s.Requests < int64(len(cases)) || s.Retries < 3 {
			t.Errorf("full=%v summary %+v", full, s)
		}
		if err := rep.Err(); !verdict.IsMismatch(err) {
			t.Errorf("full=%v Err() = %v, want a mismatch", full, err)
		}
	}
}

func TestFullReadsAtMostSizePlusOne(t *testing.T) {
	var wrote atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Chunked, no Content-Length: 1 MiB for a 25-byte asset.
		chunk := strings.Repeat("x", 1024)
		for range 1024 {
			n, err := io.WriteString(w, chunk)
			wrote.Add(int64(n))
			if err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	a := assets(map[string]string{"big.js": body}, srv.URL)
	rep, err := Check(context.Background(), a, Options{Client: fastClient(), Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Results[0]; r.Status != StatusWrongSize || r.Reason != "more than 25 bytes" {
		t.Errorf("an endless body: %s %q, want wrong-size %q", r.Status, r.Reason, "more than 25 bytes")
	}
}

func TestErr(t *testing.T) {
	res := func(s ...Status) *Report {
		r := &Report{}
		for i, st := range s {
			r.Results = append(r.Results, Result{Path: fmt.Sprint(i), URL: "u", Status: st, Reason: "r"})
		}
		r.summarize(0, 0, 0)
		return r
	}
	for _, tc := range []struct {
		statuses []Status
		want     string
	}{
		{nil, "nil"},
		{[]Status{StatusOK, StatusOK}, "nil"},
		{[]Status{StatusOK, StatusMissing}, "mismatch"},
		{[]Status{StatusUnreachable, StatusWrongContent}, "mismatch"},
		{[]Status{StatusLoop}, "mismatch"},
		{[]Status{StatusTLS}, "mismatch"},
		{[]Status{StatusOK, StatusUnreachable}, "unavailable"},
		{[]Status{StatusUnreachable, StatusUnreachable}, "unavailable"},
	} {
		err := res(tc.statuses...).Err()
		got := "nil"
		switch {
		case verdict.IsMismatch(err):
			got = "mismatch"
		case verdict.IsUnavailable(err):
			got = "unavailable"
		case err != nil:
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("Err() for %v = %v, want %s", tc.statuses, err, tc.want)
		}
	}
}

func TestSample(t *testing.T) {
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("f%02d.js", i)] = body
	}
	a := assets(files, "http://127.0.0.1:1")
	pick := func(o Options) []string {
		fs, err := selectFiles(a, o)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, f.Path)
		}
		return out
	}
	one, two := pick(Options{Sample: 5, Seed: 42}), pick(Options{Sample: 5, Seed: 42})
	if len(one) != 5 || strings.Join(one, ",") != strings.Join(two, ",") {
		t.Errorf("seeded samples %v and %v, want the same 5", one, two)
	}
	if other := pick(Options{Sample: 5, Seed: 43}); strings.Join(one, ",") == strings.Join(other, ",") {
		t.Errorf("seeds 42 and 43 drew the same sample %v", one)
	}
	with := pick(Options{Paths: []string{"f07.js", "f07.js"}, Sample: 3, Seed: 1})
	if len(with) != 4 || !strings.Contains(strings.Join(with, ","), "f07.js") {
		t.Errorf("Paths f07.js + Sample 3 = %v, want f07.js and 3 more", with)
	}
	if all := pick(Options{Sample: 500}); len(all) != 50 {
		t.Errorf("Sample 500 of 50 = %d files, want 50", len(all))
	}
	if all := pick(Options{Paths: []string{"f01.js"}, AllFiles: true}); len(all) != 50 {
		t.Errorf("AllFiles = %d files, want 50", len(all))
	}
	if _, err := selectFiles(a, Options{Paths: []string{"nope.js"}}); err == nil {
		t.Error("a path not in the manifest: no error")
	}
	// The files the instance serves are not on the CDN: every file and
	// the sample leave them out; a path asked for by name is checked.
	for i := range a.Files {
		if i%2 == 0 {
			a.Files[i].Served = manifest.ServedInstance
		}
	}
	for name, o := range map[string]Options{"every file": {}, "AllFiles": {AllFiles: true, Paths: []string{"f01.js"}}, "Sample": {Sample: 500}} {
		if got := pick(o); len(got) != 25 || slices.ContainsFunc(got, func(p string) bool { f, _ := a.File(p); return f.OnInstance() }) {
			t.Errorf("%s with half the files on the instance = %v, want the 25 on the CDN", name, got)
		}
	}
	if got := pick(Options{Paths: []string{"f00.js"}}); !slices.Equal(got, []string{"f00.js"}) {
		t.Errorf("Paths f00.js (on the instance) = %v, want it checked as asked", got)
	}
}

// fakeResolver resolves names from a map.
type fakeResolver map[string][]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ips, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

func TestOrigin(t *testing.T) {
	res := fakeResolver{
		"cdn.example":    {"127.0.0.10", "::1"},
		"origin.example": {"127.0.0.20"},
		"alias.example":  {"::1"},
		"other.example":  {"127.0.0.10"},
	}
	for _, tc := range []struct {
		origin string
		cdn    []string
		refuse string // "" allowed
		note   bool
	}{
		{"https://origin.example", []string{"https://cdn.example/assets/"}, "", false},
		{"https://cdn.example/origin/", []string{"https://cdn.example/assets/"}, "the same scheme, host and port", false},
		{"https://CDN.example:443", []string{"https://cdn.example"}, "the same scheme, host and port", false},
		{"https://alias.example", []string{"https://cdn.example"}, "both resolve to [::1]:443", false},
		{"https://other.example", []string{"https://x.example", "https://cdn.example"}, "both resolve to 127.0.0.10:443", true},
		{"http://other.example", []string{"https://cdn.example"}, "", false}, // same address, another port
		{"http://127.0.0.10:80", []string{"http://cdn.example"}, "both resolve to 127.0.0.10:80", false},
		{"http://127.0.0.1:8080", []string{"http://127.0.0.1:9090"}, "", false},
		{"https://unknown.example", []string{"https://cdn.example"}, "", true},
		{"ftp://origin.example", []string{"https://cdn.example"}, "want an http or https URL", false},
	} {
		a := assets(map[string]string{"a.js": body}, tc.cdn...)
		a.Origin = tc.origin
		oc, err := checkOrigin(context.Background(), tc.origin, tc.cdn, res)
		if tc.refuse == "" {
			if err != nil {
				t.Errorf("origin %s, CDN %v: %v, want allowed", tc.origin, tc.cdn, err)
			} else if (oc.Note != "") != tc.note {
				t.Errorf("origin %s, CDN %v: note %q, want a note: %v", tc.origin, tc.cdn, oc.Note, tc.note)
			}
			continue
		}
		var ve *manifest.ValidationError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.refuse) {
			t.Errorf("origin %s, CDN %v: %v, want a ValidationError saying %q", tc.origin, tc.cdn, err, tc.refuse)
		}
		// Check itself refuses before sending anything.
		c := fastClient()
		if _, err := Check(context.Background(), a, Options{Client: c, Resolver: res}); !errors.As(err, &ve) || c.Stats().Requests != 0 {
			t.Errorf("Check with origin %s: %v after %d requests, want a ValidationError and none", tc.origin, err, c.Stats().Requests)
		}
	}
	// The flag overrides the manifest.
	a := assets(map[string]string{"a.js": body}, "https://cdn.example")
	a.Origin = "https://origin.example"
	if _, err := Check(context.Background(), a, Options{Origin: "https://cdn.example", Resolver: res}); err == nil {
		t.Error("Options.Origin = the CDN: no error")
	}
}
