package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
)

// servedEnv is a release split between a real nginx CDN that holds only
// its _next/ folder (Next.js with assetPrefix) and a real nginx instance
// that serves the rest itself: its pages, the RSC payload, the service
// worker and what it fetches at its scope, public/ files. The manifest is
// written by the real record (--cdn-path _next), with the release's image
// added.
type servedEnv struct {
	cdn, cdnDir, inst, instDir string
	// manifest is the split (v3) manifest; cdnOnly the same release
	// recorded without --cdn-path (every file said to be on the CDN); both
	// the split with the app chunk said to be on the CDN and the instance.
	manifest, cdnOnly, both string
	files                   map[string]string // path → body, as built
	config                  manifest.Digest
}

const (
	servedJS   = "_next/static/chunks/app-1a2b3c4d5e6f7a8b.js"
	servedCSS  = "_next/static/css/9f8e7d6c5b4a3f2e.css"
	servedFont = "_next/static/media/font-0a1b2c3d4e5f6a7b.woff2"
)

func newServedEnv(t *testing.T) servedEnv {
	t.Helper()
	e := servedEnv{cdnDir: t.TempDir(), instDir: t.TempDir()}
	e.cdn = testenv.Nginx(t, e.cdnDir)
	e.inst = testenv.Nginx(t, e.instDir)
	e.files = map[string]string{
		"index.html": `<!doctype html><html><head><link rel="icon" href="/favicon.ico">` +
			`<link rel="stylesheet" href="` + e.cdn + `/` + servedCSS + `">` +
			`<script src="` + e.cdn + `/` + servedJS + `" async></script></head><body>store</body></html>`,
		"index.txt":   `1:HL["` + e.cdn + `/` + servedCSS + `","style"]` + "\n0:[\"$\",\"main\",null,{}]\n",
		"favicon.ico": "\x00\x00\x01\x00icon",
		"sw.js":       `self.addEventListener("install", e => e.waitUntil(fetch("/ngsw.json")))`,
		"ngsw.json":   `{"configVersion":1,"assetGroups":[]}`,
		"robots.txt":  "User-agent: *\n",
		servedJS:      `fetch("/index.txt?_rsc=" + k); navigator.serviceWorker.register("/sw.js")`,
		servedCSS:     `@font-face{font-family:F;src:url(../media/font-0a1b2c3d4e5f6a7b.woff2)}`,
		servedFont:    "wOF2font",
	}
	build := t.TempDir()
	for p, body := range e.files {
		for _, dir := range []string{build, e.instDir, e.cdnDir} {
			onCDN := strings.HasPrefix(p, "_next/")
			if (dir == e.instDir && onCDN) || (dir == e.cdnDir && !onCDN) {
				continue
			}
			writeFile(t, filepath.Join(dir, filepath.FromSlash(p)), body)
		}
	}
	im, conf := webImage()
	e.config = conf
	record := func(name string, extra ...string) string {
		out := filepath.Join(t.TempDir(), name)
		args := append([]string{"record", "--release", "store-web", "--generation", "4", "--assets", build, "--cdn", e.cdn + "/", "--output", out}, extra...)
		if code, _, stderr := run(t, args...); code != 0 {
			t.Fatalf("record %q: exit %d\n%s", extra, code, stderr)
		}
		m, _, err := manifest.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		m.Images = []manifest.Image{im}
		m.APIVersion = m.Version()
		raw, err := m.Indent()
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, out, string(raw))
		return out
	}
	e.manifest = record("split.json", "--cdn-path", "_next")
	e.cdnOnly = record("cdn-only.json")
	e.both = record("both.json", "--cdn-path", "_next", "--cdn-and-instance-path", "app-*.js")
	return e
}

func writeFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// admit runs a default admit of the instance's page against mpath and
// returns the exit code, the decision and the state directory.
// expect runs admit with args and holds it to code: admitted (0) with
// checks on both the instance and the CDN and the trusted state written,
// or refused with a finding of kind for subject whose message holds want
// and nothing written.
func (e servedEnv) expect(t *testing.T, mpath string, args []string, code int, kind admission.Kind, subject, want string) {
	t.Helper()
	got, d, state := e.admit(t, mpath, args...)
	refusing := d.Refusals()
	if got != code {
		t.Fatalf("exit %d, want %d; findings %+v", got, code, refusing)
	}
	if written := stateWritten(t, state); written != (code == 0) {
		t.Errorf("trusted state written: %v, want %v", written, code == 0)
	}
	if code == 0 {
		if d.InstanceChecked == 0 || d.CDNChecked == 0 {
			t.Errorf("admitted with %d checks on the instance and %d on the CDN, want both", d.InstanceChecked, d.CDNChecked)
		}
		return
	}
	for _, f := range refusing {
		if f.Kind == kind && f.Subject == subject && strings.Contains(f.Message, want) {
			return
		}
	}
	t.Errorf("no %s finding for %s naming %q; findings %+v", kind, subject, want, refusing)
}

func (e servedEnv) admit(t *testing.T, mpath string, extra ...string) (int, admission.Decision, string) {
	t.Helper()
	dir := t.TempDir()
	state, report := filepath.Join(dir, "state"), filepath.Join(dir, "report.json")
	args := append([]string{"admit", "--manifest", mpath, "--release", "store-web", "--state-dir", state, "--insecure-allow-unsigned",
		"--image", "web", "--running", "digest:" + e.config.String(), "--platform", "linux/amd64",
		"--timeout", "20s", "--report", report}, extra...)
	code, _, stderr := run(t, args...)
	var d admission.Decision
	raw, err := os.ReadFile(report)
	if err == nil {
		err = json.Unmarshal(raw, &d)
	}
	if err != nil {
		t.Fatalf("admit: no report (%v); exit %d, stderr:\n%s", err, code, stderr)
	}
	return code, d, state
}

// TestServedSplitRecorded: record --cdn-path writes a v3 manifest that
// says the instance serves every file outside _next/, and the graph that
// leads from the page to the RSC payload and the service worker's fetch.
func TestServedSplitRecorded(t *testing.T) {
	t.Parallel()
	e := newServedEnv(t)
	m, _, err := manifest.ReadFile(e.manifest)
	if err != nil {
		t.Fatal(err)
	}
	if m.APIVersion != manifest.APIVersionV3 {
		t.Errorf("apiVersion %q, want %q", m.APIVersion, manifest.APIVersionV3)
	}
	for _, f := range m.Assets.Files {
		if want := !strings.HasPrefix(f.Path, "_next/"); f.OnInstance() != want {
			t.Errorf("%s: served %q, want on the instance %v", f.Path, f.Served, want)
		}
	}
	closure := m.Assets.Closure([]string{servedJS, "favicon.ico", servedCSS})
	for _, p := range []string{"index.txt", "sw.js", "ngsw.json", servedFont} {
		if !slices.Contains(closure, p) {
			t.Errorf("the closure of the page's references lacks %s: %q", p, closure)
		}
	}
	cdnOnly, _, err := manifest.ReadFile(e.cdnOnly)
	if err != nil {
		t.Fatal(err)
	}
	if cdnOnly.APIVersion != manifest.APIVersionV2 {
		t.Errorf("without --cdn-path apiVersion %q, want %q", cdnOnly.APIVersion, manifest.APIVersionV2)
	}
}

// TestAttackServed is the adversarial table of where a file is served
// (issue 34, class 5): every case runs the real CLI against a real nginx
// CDN and a real nginx instance, after changing one file on one of them,
// and asserts the exit code, the refusing finding (its kind, the file it
// names and where), and that the trusted state was written only when
// admitted.
func TestAttackServed(t *testing.T) {
	t.Parallel()
	e := newServedEnv(t)
	type change struct {
		dir, path string
		body      *string // nil deletes
	}
	str := func(s string) *string { return &s }
	cases := []struct {
		name     string
		changes  func() []change
		manifest string
		args     []string
		code     int
		kind     admission.Kind
		subject  string
		where    string // a word the finding's message holds
	}{
		{name: "a correct split deployment is admitted", code: 0},
		{name: "a correct split deployment, every asset where it is served", args: []string{"--all-assets"}, code: 0},
		{name: "the same deployment with a manifest that says the CDN serves everything is refused",
			manifest: e.cdnOnly, code: 1, kind: admission.KindAssetMissingOnCDN, subject: "favicon.ico", where: "CDN"},
		{name: "the RSC payload, reached by the graph only, deleted from the instance",
			changes: func() []change { return []change{{e.instDir, "index.txt", nil}} },
			code:    1, kind: admission.KindAssetMissingOnInstance, subject: "index.txt", where: "instance"},
		{name: "what the service worker fetches at its scope changed on the instance, same size",
			changes: func() []change {
				return []change{{e.instDir, "ngsw.json", str(strings.Replace(e.files["ngsw.json"], "[]", "[{", 1)[:len(e.files["ngsw.json"])])}}
			},
			code: 1, kind: admission.KindAssetContentMismatch, subject: "ngsw.json", where: "instance"},
		{name: "the service worker itself deleted from the instance",
			changes: func() []change { return []change{{e.instDir, "sw.js", nil}} },
			code:    1, kind: admission.KindAssetMissingOnInstance, subject: "sw.js", where: "instance"},
		{name: "a public/ file the page references moved from the instance to the CDN",
			changes: func() []change {
				return []change{{e.instDir, "favicon.ico", nil}, {e.cdnDir, "favicon.ico", str(e.files["favicon.ico"])}}
			},
			code: 1, kind: admission.KindAssetMissingOnInstance, subject: "favicon.ico", where: "instance"},
		{name: "a CDN chunk served by the instance instead of the CDN",
			changes: func() []change {
				return []change{{e.cdnDir, servedJS, nil}, {e.instDir, servedJS, str(e.files[servedJS])}}
			},
			code: 1, kind: admission.KindAssetMissingOnCDN, subject: servedJS, where: "CDN"},
		{name: "a font the CDN stylesheet loads deleted from the CDN",
			changes: func() []change { return []change{{e.cdnDir, servedFont, nil}} },
			code:    1, kind: admission.KindAssetMissingOnCDN, subject: servedFont, where: "CDN"},
		// robots.txt is a root (every .html and .txt file is): a page the
		// manifest says the instance serves is checked there by default.
		{name: "an instance file no page leads to deleted: a default admit checks it, as a root the instance serves",
			changes: func() []change { return []change{{e.instDir, "robots.txt", nil}} },
			code:    1, kind: admission.KindAssetMissingOnInstance, subject: "robots.txt", where: "instance"},
		{name: "an instance file no page leads to deleted: --all-assets checks it on the instance",
			changes: func() []change { return []change{{e.instDir, "robots.txt", nil}} },
			args:    []string{"--all-assets"}, code: 1, kind: admission.KindAssetMissingOnInstance, subject: "robots.txt", where: "instance"},
		{name: "--instance-base pointing at the CDN finds no instance file there",
			args: []string{"--instance-base", "CDN"}, code: 1, kind: admission.KindAssetMissingOnInstance, subject: "index.txt", where: "instance"},
		{name: "a file both serve, on both, is admitted", manifest: e.both,
			changes: func() []change { return []change{{e.instDir, servedJS, str(e.files[servedJS])}} }, code: 0},
		{name: "a file both serve, missing on the instance", manifest: e.both,
			code: 1, kind: admission.KindAssetMissingOnInstance, subject: servedJS, where: "instance"},
		{name: "a file both serve, on the instance but missing on the CDN", manifest: e.both,
			changes: func() []change {
				return []change{{e.instDir, servedJS, str(e.files[servedJS])}, {e.cdnDir, servedJS, nil}}
			},
			code: 1, kind: admission.KindAssetMissingOnCDN, subject: servedJS, where: "CDN"},
		{name: "--instance-base that is no base URL cannot check the instance files",
			args: []string{"--instance-base", "ftp://x"}, code: 3, kind: admission.KindDependencyUnreachable, subject: "instance", where: "instance"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var changes []change
			if tc.changes != nil {
				changes = tc.changes()
			}
			for _, c := range changes {
				p := filepath.Join(c.dir, filepath.FromSlash(c.path))
				if c.body == nil {
					if err := os.Remove(p); err != nil {
						t.Fatal(err)
					}
				} else {
					writeFile(t, p, *c.body)
				}
			}
			t.Cleanup(func() {
				for _, c := range changes {
					p := filepath.Join(c.dir, filepath.FromSlash(c.path))
					os.Remove(p)
					onCDN := strings.HasPrefix(c.path, "_next/")
					if (c.dir == e.cdnDir) == onCDN {
						writeFile(t, p, e.files[c.path])
					}
				}
			})
			mpath := tc.manifest
			if mpath == "" {
				mpath = e.manifest
			}
			args := append([]string{"--probe", e.inst + "/"}, tc.args...)
			for i, a := range args {
				if a == "CDN" {
					args[i] = e.cdn + "/"
				}
			}
			e.expect(t, mpath, args, tc.code, tc.kind, tc.subject, tc.where)
		})
	}
}
