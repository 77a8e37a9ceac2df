package app_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/scenario"
	"github.com/lockstep-dev/lockstep/internal/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
)

// blackhole is a loopback TCP server that accepts connections and never
// answers: a dependency that hangs. It returns its "http://host:port".
func blackhole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String()
}

// writeManifest writes a manifest of release store-web, generation 4, of
// the web image, the CDN base cdn and files, and returns its path.
func writeManifest(t *testing.T, cdn string, files map[string]string) string {
	t.Helper()
	im, _ := webImage()
	_, raw, err := scenario.Manifest("store-web", 4, []manifest.Image{im}, []string{cdn + "/"}, files)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "release.json")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Class 9 of issue 35, "honest causes": a deadline reached during
// lockstep's own work is deadline-own-work, never a dependency being
// unreachable; one reached waiting for a dependency names it; and a page
// that names 50,000 assets is refused by the gate's own bound at once,
// not run into the deadline. Each is could-not-verify (exit 3: nothing was
// found wrong, and nothing was verified), through the real CLI against real
// nginx servers and a loopback server that never answers; none records a
// generation.
func TestAttackDeadline(t *testing.T) {
	_, conf := webImage()
	hung := blackhole(t)

	// The release's assets on a real nginx CDN, and pages on a real nginx
	// app: one that references four of them on a CDN that accepts
	// connections and never answers, one that references 50,000.
	files := scenario.Assets("v1", 4)
	cdnDir, appDir := t.TempDir(), t.TempDir()
	if err := scenario.WriteFiles(cdnDir, files); err != nil {
		t.Fatal(err)
	}
	cdn := testenv.Nginx(t, cdnDir)
	// A release of 60,000 files (a 6.5 MB manifest): parsing it is more
	// than a 100 ms deadline allows, with nothing else to wait for.
	big := map[string]string{}
	for i := range 60000 {
		big[fmt.Sprintf("js/c%06d.js", i)] = fmt.Sprint(i)
	}
	bigManifest := writeManifest(t, cdn, big)
	pages := map[string]string{
		"index.html": scenario.Page(hung, scenario.Paths(files)),
		"many.html":  scenario.Page(cdn, scenario.Paths(big)[:50000]),
	}
	for name, body := range pages {
		if err := os.WriteFile(filepath.Join(appDir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	app := testenv.Nginx(t, appDir)

	for _, tc := range []struct {
		name     string
		manifest string
		args     []string
		kind     admission.Kind
		subject  string // the finding's subject contains it
		says     []string
		never    admission.Kind
		within   time.Duration // the whole command, with its setup
	}{
		{name: "own work: parsing a manifest larger than the deadline allows", manifest: bigManifest,
			args: []string{"--timeout", "100ms"}, kind: admission.KindDeadlineOwnWork, never: admission.KindDependencyUnreachable,
			subject: "fetching the manifest", says: []string{"deadline of 100ms", "own work", "no dependency failed"}, within: time.Minute},
		{name: "a CDN that never answers is named", manifest: writeManifest(t, hung, files),
			args: []string{"--timeout", "3s", "--probe", app + "/index.html"}, kind: admission.KindDependencyUnreachable, never: admission.KindDeadlineOwnWork,
			subject: "host " + strings.TrimPrefix(hung, "http://"), says: []string{"deadline of 3s", "while checking assets on the CDN"}, within: 30 * time.Second},
		{name: "a page naming 50,000 assets of the release, with the default timeout", manifest: bigManifest,
			args: []string{"--probe", app + "/many.html"}, kind: admission.KindTooManyReferences, never: admission.KindDeadlineOwnWork,
			subject: "store-web@4", says: []string{"50000"}, within: 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			state, report := filepath.Join(dir, "state"), filepath.Join(dir, "report.json")
			args := append([]string{"admit", "--manifest", tc.manifest, "--release", "store-web", "--state-dir", state,
				"--insecure-allow-unsigned", "--image", "web", "--running", "digest:" + conf.String(), "--platform", "linux/amd64",
				"--report", report}, tc.args...)
			start := time.Now()
			code, _, stderr := run(t, args...)
			took := time.Since(start)
			var d admission.Decision
			raw, err := os.ReadFile(report)
			if err == nil {
				err = json.Unmarshal(raw, &d)
			}
			if err != nil {
				t.Fatalf("no report (%v); exit %d:\n%s", err, code, stderr)
			}
			if code != 3 || !d.Unverified {
				t.Errorf("exit %d (unverified %v), want 3:\n%s", code, d.Unverified, stderr)
			}
			var found bool
			for _, f := range d.Refusals() {
				if f.Kind == tc.never {
					t.Errorf("a %s finding: %s", f.Kind, f.Message)
				}
				if f.Kind != tc.kind || !strings.Contains(f.Subject, tc.subject) {
					continue
				}
				found = true
				for _, s := range tc.says {
					if !strings.Contains(f.Message, s) {
						t.Errorf("the %s finding does not say %q: %s", f.Kind, s, f.Message)
					}
				}
			}
			if !found {
				t.Errorf("no %s finding about %q:\n%s", tc.kind, tc.subject, stderr)
			}
			if took > tc.within {
				t.Errorf("admit took %s, more than %s", took, tc.within)
			}
			if stateWritten(t, state) {
				t.Error("a generation was recorded")
			}
		})
	}
}
