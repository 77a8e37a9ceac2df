package admission_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/testkit/browsertest"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

func urlKey(scheme, host, p string) string {
	return strings.ToLower(scheme) + "://" + strings.ToLower(host) + p
}

// maxPages bounds a crawl.
const maxPages = 100

// crawl judges every page of the build and every page their links lead
// to on the instance (a single-page app's client routes), and returns
// their gaps.
func (o *oracleDeployment) crawl(t *testing.T) []string {
	t.Helper()
	queue := slices.Clone(o.pages)
	seen := map[string]bool{}
	for _, p := range queue {
		seen[p] = true
	}
	inst, _ := url.Parse(o.instance)
	var gaps []string
	for len(queue) > 0 {
		page := queue[0]
		queue = queue[1:]
		g, links := o.judge(t, page, o.fx.until, o.fx.stay)
		gaps = append(gaps, g...)
		for _, l := range links {
			u, err := url.Parse(l)
			if err != nil || !strings.EqualFold(u.Host, inst.Host) || seen[u.Path] {
				continue
			}
			// A link to a file that is no page (robots.txt, an image).
			if rel, ok := o.file(strings.TrimPrefix(u.Path, "/")); ok && !strings.HasSuffix(rel, ".html") {
				continue
			}
			seen[u.Path] = true
			if len(seen) > maxPages {
				t.Fatalf("over %d pages: %s", maxPages, u.Path)
			}
			queue = append(queue, u.Path)
		}
	}
	return gaps
}

// judge probes page with the gate, loads it in the browser, and returns
// its links and its gaps, each "PAGE KIND ORIGIN PATH (details)":
//   - refused KIND SUBJECT: the gate refused the correct deployment;
//   - unchecked ORIGIN PATH: the browser loaded a file of the release
//     there that the gate does not check there;
//   - unrecorded ORIGIN PATH: the browser loaded a file of the build
//     that the manifest does not hold.
func (o *oracleDeployment) judge(t *testing.T, page, until string, stay time.Duration) (gaps, links []string) {
	t.Helper()
	ctx := context.Background()
	rc := &recordingChecker{CDNChecker: cdngate.Checker{}, checked: map[string]bool{}}
	d := o.gate(page, rc)
	for _, f := range d.Findings {
		if f.Severity == admission.Refuse {
			gaps = append(gaps, fmt.Sprintf("%s refused %s %s (%s)", page, f.Kind, f.Subject, f.Message))
		}
	}
	loadedPage, err := o.b.Load(ctx, o.instance+page, browsertest.LoadOptions{Hosts: o.hosts, Until: until, Stay: stay})
	if err != nil {
		t.Fatalf("loading %s: %v", page, err)
	}
	if until != "" && !loadedPage.UntilMet {
		t.Errorf("%s: %s did not come within %v", page, until, stay)
	}
	reqs := loadedPage.Requests
	inst, _ := url.Parse(o.instance)
	pub := o.fx.publicPath
	if pub == "" {
		pub = "/"
	}
	seen := map[string]bool{}
	var loaded []string
	defer func() {
		t.Logf("%s: %d requests, %d for files of the release, %d gaps: %s", page, len(reqs), len(loaded), len(gaps), strings.Join(loaded, " "))
	}()
	for i, r := range reqs {
		u, err := url.Parse(r.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			continue // data:, blob:
		}
		if i == 0 && r.Type == "Document" {
			continue // the page itself: what the probe reads
		}
		var origin, base string
		switch {
		case strings.EqualFold(u.Host, inst.Host):
			origin, base = "instance", "/"
			if pub != "/" && strings.HasPrefix(u.Path, pub) {
				base = pub
			}
		case strings.EqualFold(u.Host, o.cdnBase.Host) && strings.HasPrefix(u.Path, o.cdnBase.Path):
			origin, base = "cdn", o.cdnBase.Path
		default:
			continue // another host: not the release's
		}
		rel, ok := o.file(strings.TrimPrefix(u.Path, base))
		if !ok {
			t.Logf("%s: not a file of the release: %s", page, r)
			continue
		}
		loaded = append(loaded, origin+" "+u.Path)
		if l := (oracleLoad{origin, rel}); !slices.Contains(o.loaded[page], l) {
			o.loaded[page] = append(o.loaded[page], l)
		}
		gap := ""
		switch _, inManifest := o.m.Assets.File(rel); {
		case !inManifest:
			gap = "unrecorded"
		case !rc.checked[urlKey(u.Scheme, u.Host, base+rel)]:
			gap = "unchecked"
		default:
			continue
		}
		g := fmt.Sprintf("%s %s %s %s", page, gap, origin, u.Path)
		if seen[g] {
			continue
		}
		seen[g] = true
		gaps = append(gaps, fmt.Sprintf("%s (%s %s, from the %s, by %s)", g, r.Type, r.URL, r.Target, r.Initiator))
	}
	return gaps, loadedPage.Links
}

// file returns the file of the build that nginx serves for the URL path
// rel (relative to where the build is served), as its try_files does.
func (o *oracleDeployment) file(rel string) (string, bool) {
	if p, err := url.PathUnescape(rel); err == nil {
		rel = p
	}
	for _, c := range []string{rel, rel + ".html", path.Join(rel, "index.html")} {
		c = strings.TrimPrefix(path.Clean("/"+c), "/")
		if fi, err := os.Stat(filepath.Join(o.dist, filepath.FromSlash(c))); err == nil && fi.Mode().IsRegular() {
			return c, true
		}
	}
	return "", false
}
