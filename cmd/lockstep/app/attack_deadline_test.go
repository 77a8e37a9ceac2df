package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/cmd/lockstep/app"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/internal/transport"
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
	// Its cases bound the whole command's time (within) at several times
	// what it takes beside another test (the package's tests run two at a
	// time, beside other packages' test binaries, as they always did);
	// well under the default timeout that a refusal "at once" must not
	// run into.
	t.Parallel()
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

// lockedBuffer is a buffer a test reads while a command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitingLine matches the line the gate says at the default level while
// it waits for a container: what, why, the attempt and the time left.
var waitingLine = regexp.MustCompile(`level=INFO msg=waiting for="the running image" why="docker unix://[^"]*: no such container acme-wbe" attempt=\d+ left=(\d+)s`)

// Issue 36, "a wait that can be seen and keeps its cause", as its user met
// it: the gate told to check a mistyped container (acme-wbe) on a real
// Docker daemon. With the default timeout it says at once, at the default
// log level, what it waits for and why, with the time left (about 50 s),
// on a terminal and on a pipe (a journal) alike, with no ANSI sequence;
// stopped then (SIGTERM, as systemd stops it), it refuses naming the
// cause, a few seconds in rather than a minute. With a short --timeout
// the wait ends at its own deadline, not the check's, and the refusal
// names the cause. (The default path is the same code: waitFor, whose
// deadlines TestWaitKeepsItsCause checks at any timeout.) And more
// attempts than the transport's 16 connections per host to the real
// daemon each answer at once: the Docker client leaves its error answers
// unclosed, which held every slot until the check's deadline.
func TestGateWaitDocker(t *testing.T) {
	t.Parallel()
	rt := testenv.StartRuntimes(t, "", "TestWaitKeepsItsCause (admission) and TestBodyReadToEOF (transport)")
	env := []string{"DOCKER_HOST=" + rt.Docker} // the run's own
	files := scenario.Assets("v1", 4)
	m := writeManifest(t, "http://127.0.0.1:1", files)
	args := func(dir string, extra ...string) []string {
		return append([]string{"admit", "--manifest", m, "--release", "store-web", "--state-dir", filepath.Join(dir, "state"),
			"--insecure-allow-unsigned", "--image", "web", "--running", "docker:acme-wbe", "--platform", "linux/amd64",
			"--report", filepath.Join(dir, "report.json")}, extra...)
	}
	// refusal reads the running digest's refusal from the report in dir.
	refusal := func(t *testing.T, dir string) admission.Finding {
		t.Helper()
		var d admission.Decision
		raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
		if err == nil {
			err = json.Unmarshal(raw, &d)
		}
		if err != nil {
			t.Fatalf("no report: %v", err)
		}
		for _, f := range d.Refusals() {
			if f.Subject == "running digest" || strings.Contains(f.Subject, "running image") {
				return f
			}
		}
		t.Fatalf("no refusal of the running image: %+v", d.Refusals())
		return admission.Finding{}
	}

	for _, terminal := range []bool{false, true} {
		t.Run(fmt.Sprintf("default timeout, stopped once it says why (terminal %v)", terminal), func(t *testing.T) {
			dir := t.TempDir()
			var stderr interface{ String() string }
			var errw io.Writer
			var out bytes.Buffer
			if terminal {
				master, tty := testenv.PTY(t)
				errw = tty
				var got lockedBuffer
				go io.Copy(&got, master)
				stderr = &got
			} else {
				var got lockedBuffer
				errw = &got
				stderr = &got
			}
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			done := make(chan int, 1)
			start := time.Now()
			go func() {
				done <- app.Run(ctx, env, args(dir), &out, errw)
			}()
			var line []string
			for line == nil && time.Since(start) < 20*time.Second {
				time.Sleep(50 * time.Millisecond)
				line = waitingLine.FindStringSubmatch(stderr.String())
			}
			if line == nil {
				stop()
				<-done
				t.Fatalf("no waiting line at the default level after %s:\n%s", time.Since(start), stderr.String())
			}
			if left, _ := strconv.Atoi(line[1]); left < 30 {
				t.Errorf("the wait says %ss left, want the default timeout's (about 50 s)", line[1])
			}
			stop() // as SIGTERM does, through main's signal.NotifyContext
			code := <-done
			time.Sleep(100 * time.Millisecond) // the terminal's last bytes
			if took := time.Since(start); code != 3 || took > 25*time.Second {
				t.Errorf("exit %d after %s, want 3 within seconds", code, took)
			}
			if f := refusal(t, dir); !strings.Contains(f.Message, "no such container acme-wbe") {
				t.Errorf("the refusal does not name the cause: %s: %s", f.Kind, f.Message)
			}
			if strings.Contains(stderr.String(), "\x1b") {
				t.Errorf("an ANSI sequence on stderr:\n%q", stderr.String())
			}
		})
	}

	t.Run("a short timeout: the wait ends before the deadline, naming the cause", func(t *testing.T) {
		dir := t.TempDir()
		start := time.Now()
		code, _, stderr := runIn(t, env, args(dir, "--timeout", "6s")...)
		took := time.Since(start)
		if code != 3 || took >= 6*time.Second {
			t.Errorf("exit %d after %s, want 3 before the 6 s deadline:\n%s", code, took, stderr)
		}
		f := refusal(t, dir)
		if f.Kind != admission.KindDependencyUnreachable || !strings.Contains(f.Message, "no such container acme-wbe") ||
			strings.Contains(f.Message, "deadline of") {
			t.Errorf("the refusal: %s: %s; want dependency-unreachable naming the container, not the deadline", f.Kind, f.Message)
		}
		if !waitingLine.MatchString(stderr) {
			t.Errorf("no waiting line on stderr:\n%s", stderr)
		}
	})

	t.Run("more attempts than the host's connections", func(t *testing.T) {
		src, err := running.NewDocker(rt.Docker, "acme-wbe", running.Options{Policy: transport.DefaultPolicy()})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 * transport.DefaultPolicy().MaxConnsPerHost {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := src.Observe(ctx)
			cancel()
			if !errors.Is(err, running.ErrNoContainer) || !strings.Contains(err.Error(), "no such container acme-wbe") {
				t.Fatalf("attempt %d: %v, want no such container acme-wbe", i+1, err)
			}
		}
	})
}
