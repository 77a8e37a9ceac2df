package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission/agent"
	"github.com/lockstep-dev/lockstep/internal/testkit/awsfake"
	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
	"github.com/lockstep-dev/lockstep/internal/testkit/runningtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/fleet"
)

// lockstep is the binary TestMain builds once.
var lockstep string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lockstep-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lockstep, err = testenv.BuildLockstep(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// release is a manifest whose assets a loopback CDN serves.
type release struct {
	manifestPath string
	cdnBase      string
	files        map[string]string
}

func newRelease(t *testing.T) release { return newReleases(t, 7)[0] }

// newReleases writes one manifest per generation, all of the same assets
// on one loopback CDN.
func newReleases(t *testing.T, gens ...int64) []release {
	t.Helper()
	files := map[string]string{
		"assets/app-1a2b.js":  "console.log('v1')\n",
		"assets/app-3c4d.css": "body{color:red}\n",
		"index.html":          "<!doctype html>\n",
	}
	cdn := httptest.NewServer(http.StripPrefix("/store", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.Error(w, "AccessDenied", http.StatusForbidden) // as S3 behind CloudFront does
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		if r.Method != http.MethodHead {
			w.Write([]byte(body))
		}
	})))
	t.Cleanup(cdn.Close)
	dir := t.TempDir()
	var out []release
	for _, gen := range gens {
		m := fleettest.Manifest(gen)
		m.Assets.CDN = []string{cdn.URL + "/store/"}
		m.Assets.Files = nil
		for _, p := range []string{"assets/app-1a2b.js", "assets/app-3c4d.css", "index.html"} {
			m.Assets.Files = append(m.Assets.Files, manifest.File{Path: p, Size: int64(len(files[p])), SHA256: manifest.SHA256([]byte(files[p])).Hex})
		}
		m.Assets.Fingerprint = manifest.Fingerprint(m.Assets.Files)
		raw, err := m.Indent()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("release-%d.json", gen))
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, release{manifestPath: path, cdnBase: cdn.URL + "/store/", files: files})
	}
	return out
}

// page serves the instance's own page, referencing assets under the CDN.
func page(t *testing.T, cdnBase string, assets ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("<!doctype html><html><head>")
	for _, a := range assets {
		if strings.HasSuffix(a, ".css") {
			fmt.Fprintf(&b, `<link rel="stylesheet" href="%s%s">`, cdnBase, a)
		} else {
			fmt.Fprintf(&b, `<script src="%s%s"></script>`, cdnBase, a)
		}
	}
	b.WriteString("</head><body></body></html>")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(b.String()))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// status reads an agent's status.
func status(t *testing.T, url string) agent.Status {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st agent.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// run runs lockstep to completion and fails the test unless it exits 0.
func run(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(lockstep, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("lockstep %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// startAgent starts `lockstep agent` for one instance (named name, unless
// empty) and waits until it
// has finished its first check; it returns the status URL.
func startAgent(t *testing.T, name string, env []string, args ...string) string {
	t.Helper()
	port := testenv.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	var stderr bytes.Buffer
	// Each instance has its own trusted state, as on its own machine. An
	// unnamed one finds its identity as the flags in args say.
	base := []string{"agent", "--listen", addr, "--interval", "1h", "--state-dir", t.TempDir()}
	if name != "" {
		base = append(base, "--identity", "hostname", "--instance-name", name)
	}
	cmd := exec.Command(lockstep, append(base, args...)...)
	cmd.Stderr = &stderr
	cmd.Env = append(append(os.Environ(), "AWS_EC2_METADATA_DISABLED=true"), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("agent %s stderr:\n%s", name, stderr.String())
		}
	})
	url := "http://" + addr + fleet.StatusPath
	for {
		select {
		case <-exited:
			t.Fatalf("agent %s exited: %v\n%s", name, waitErr, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := http.Get(url)
		if err != nil {
			continue
		}
		var st agent.Status
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err == nil && st.State != agent.StatePending {
			return url
		}
	}
}

func TestFleetOfAgentProcesses(t *testing.T) {
	rel := newRelease(t)
	common := []string{"--manifest", rel.manifestPath, "--release", "store-web", "--insecure-allow-unsigned", "--image", "web", "--platform", "linux/amd64"}
	goodPage := page(t, rel.cdnBase, "assets/app-1a2b.js", "assets/app-3c4d.css")
	badPage := page(t, rel.cdnBase, "assets/app-ffff.js", "assets/app-3c4d.css")
	var urls []string
	// Each instance has its own Docker daemon (a fake Engine API on a unix
	// socket) running container "web"; Docker reports the image ID, the
	// platform's config digest. i-04 pulled the tag after it was re-pushed.
	docker := func(imageID, repoDigest manifest.Digest) []string {
		host, _ := runningtest.Docker(t, runningtest.Container{
			ID: strings.Repeat("c", 64), Name: "web", Reference: "registry.example/store/web:v1",
			ImageID: imageID.String(), RepoDigests: []string{"registry.example/store/web@" + repoDigest.String()},
			OS: "linux", Arch: "amd64",
		})
		return []string{"DOCKER_HOST=" + host}
	}
	for i := range 3 {
		urls = append(urls, startAgent(t, fmt.Sprintf("i-0%d", i+1), docker(fleettest.Amd64Cfg, fleettest.Index), append(common, "--running", "docker:web", "--probe", goodPage)...))
	}
	urls = append(urls, startAgent(t, "i-04", docker(fleettest.Repushed, fleettest.Repushed), append(common, "--running", "docker:web", "--probe", badPage)...))

	// The healthz endpoints are the load balancer's second gate.
	for i, u := range urls {
		resp, err := http.Get(strings.TrimSuffix(u, fleet.StatusPath) + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := http.StatusOK
		if i == 3 {
			want = http.StatusServiceUnavailable
		}
		if resp.StatusCode != want {
			t.Errorf("agent %d /healthz = %d, want %d", i+1, resp.StatusCode, want)
		}
	}

	targets := filepath.Join(t.TempDir(), "fleet.txt")
	os.WriteFile(targets, []byte(strings.Join(urls, "\n")+"\n"), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, lockstep, "fleet", "check", "--manifest", rel.manifestPath, "--release", "store-web", "--insecure-allow-unsigned", "--targets", "file:"+targets, "--format", "json")
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("lockstep fleet check exited %d (%v), want 1\n%s\n%s", code, err, out.String(), stderr.String())
	}
	var r fleet.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, out.String())
	}
	if r.Summary.Instances != 4 || r.Summary.Match != 3 || len(r.Divergent) != 1 || r.Divergent[0].Name != "i-04" {
		t.Fatalf("summary %+v, divergent %+v: want exactly i-04 divergent", r.Summary, r.Divergent)
	}
	diffs := map[string]fleet.Difference{}
	for _, d := range r.Divergent[0].Differences {
		diffs[d.Kind] = d
	}
	if d, ok := diffs[fleet.DiffImage]; !ok || d.Got != fleettest.Repushed.String() {
		t.Errorf("i-04 image difference = %+v, want the re-pushed digest", d)
	}
	if d, ok := diffs[fleet.DiffAssets]; !ok || len(d.Assets) != 1 || d.Assets[0] != "assets/app-ffff.js" {
		t.Errorf("i-04 assets difference = %+v, want assets/app-ffff.js", d)
	}
	if len(r.Groups) != 2 || r.Groups[0].Count != 3 || !r.Groups[0].Match {
		t.Errorf("groups = %+v, want the 3 matching together", r.Groups)
	}
}

// An agent that follows a store channel checks again as soon as the channel
// moves, not at its next interval (an hour away).
func TestAgentFollowsTheChannel(t *testing.T) {
	rels := newReleases(t, 7, 8)
	storeDir := t.TempDir()
	run(t, "publish", "--allow-unsigned", "--store", storeDir, rels[0].manifestPath)
	host, _ := runningtest.Docker(t, runningtest.Container{
		ID: strings.Repeat("c", 64), Name: "web", ImageID: fleettest.Amd64Cfg.String(), OS: "linux", Arch: "amd64",
	})
	url := startAgent(t, "i-01", []string{"DOCKER_HOST=" + host},
		"--store", storeDir, "--release", "store-web", "--insecure-allow-unsigned", "--image", "web", "--platform", "linux/amd64",
		"--running", "docker:web", "--watch-interval", "100ms")
	if st := status(t, url); st.State != agent.StateAdmitted || st.Manifest == nil || st.Manifest.Generation != 7 || st.Checks != 1 {
		t.Fatalf("first status: %s, manifest %+v, %d checks; want admitted on generation 7", st.State, st.Manifest, st.Checks)
	}
	run(t, "publish", "--allow-unsigned", "--store", storeDir, rels[1].manifestPath)
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := status(t, url)
		if st.Manifest != nil && st.Manifest.Generation == 8 {
			if st.State != agent.StateAdmitted || st.Checks != 2 {
				t.Errorf("after the move: %s after %d checks, want admitted after 2", st.State, st.Checks)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the channel moved to generation 8 and the agent still checks against %+v after %d checks", st.Manifest, st.Checks)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// On EC2 the agent names itself from IMDSv2 and finds its Auto Scaling group
// (instance metadata tags off: through DescribeAutoScalingInstances).
func TestAgentIdentityFromIMDS(t *testing.T) {
	rel := newRelease(t)
	imdsSrv := httptest.NewServer(&awsfake.IMDS{Values: map[string]string{
		"instance-id": "i-0123456789abcdef0", "placement/availability-zone": "us-east-1a", "placement/region": "us-east-1", "local-ipv4": "10.0.0.5",
	}})
	defer imdsSrv.Close()
	awsSrv := httptest.NewServer(&awsfake.AWS{Instances: []awsfake.Instance{{ID: "i-0123456789abcdef0", ASG: "store-web-asg"}}})
	defer awsSrv.Close()
	env := []string{
		"AWS_EC2_METADATA_DISABLED=false", "AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imdsSrv.URL, "AWS_ENDPOINT_URL=" + awsSrv.URL,
		"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=SECRET", "AWS_REGION=",
		"AWS_CONFIG_FILE=" + filepath.Join(t.TempDir(), "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(t.TempDir(), "none"),
	}
	url := startAgent(t, "", env, "--identity", "imds", "--manifest", rel.manifestPath, "--release", "store-web", "--insecure-allow-unsigned",
		"--platform", "linux/amd64", "--running", "digest:"+fleettest.Amd64Cfg.String())
	got := status(t, url).Instance
	want := agent.Identity{InstanceID: "i-0123456789abcdef0", ASG: "store-web-asg", AvailabilityZone: "us-east-1a", PrivateIP: "10.0.0.5", Hostname: got.Hostname, Source: "imds"}
	if got != want {
		t.Errorf("identity = %+v, want %+v", got, want)
	}
}
