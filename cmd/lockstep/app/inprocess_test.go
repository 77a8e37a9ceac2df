package app

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// runEnv is Run with env, returning the exit code, stdout and stderr.
func runEnv(env []string, args ...string) (int, string, string) {
	var out, errw bytes.Buffer
	code := Run(context.Background(), env, args, &out, &errw)
	return code, out.String(), errw.String()
}

// TestRunScopesTheEnvironment: a run in process takes COSIGN_PASSWORD from
// its own environment, which neither the process nor the next run sees; a
// variable it cannot scope to the run is refused before anything runs.
func TestRunScopesTheEnvironment(t *testing.T) {
	unsetPassword(t)
	dir := t.TempDir()
	prefix := filepath.Join(dir, "release")
	pw := []string{"COSIGN_PASSWORD=in-process"}

	code, out, errs := runEnv(pw, "keygen", "--output-key-prefix", prefix)
	if code != 0 || out != prefix+".key\n"+prefix+".pub\n" {
		t.Fatalf("keygen with the run's COSIGN_PASSWORD: exit %d, stdout %q\n%s", code, out, errs)
	}
	if v, ok := os.LookupEnv("COSIGN_PASSWORD"); ok {
		t.Errorf("the run set the process's COSIGN_PASSWORD (%q)", v)
	}
	m := writeManifest(t, dir)
	if code, _, errs := runEnv(nil, "sign", "--key", prefix+".key", m); code != ExitInvalid || !strings.Contains(errs, "COSIGN_PASSWORD is not set") {
		t.Errorf("sign without the password, after a run that had it: exit %d, want 2 naming COSIGN_PASSWORD\n%s", code, errs)
	}
	if code, _, errs := runEnv([]string{"COSIGN_PASSWORD=another"}, "sign", "--key", prefix+".key", m); code != ExitInvalid || !strings.Contains(errs, "is COSIGN_PASSWORD the key's password") {
		t.Errorf("sign with a wrong password: exit %d, want 2\n%s", code, errs)
	}
	// The run's password wins over the process's.
	t.Setenv("COSIGN_PASSWORD", "the user's")
	if code, _, errs := runEnv(pw, "sign", "--key", prefix+".key", m); code != 0 {
		t.Fatalf("sign with the run's password: exit %d\n%s", code, errs)
	}
	if code, _, errs := runEnv(nil, "manifest", "verify", "--key", prefix+".pub", m); code != 0 {
		t.Errorf("verify what the run signed: exit %d\n%s", code, errs)
	}

	for _, env := range [][]string{{"LOCKSTEP_SIGN_KEY=" + prefix + ".key"}, {"COSIGN_PASSWORD"}, {"AWS_CA_BUNDLE=/s3cr3t/ca.pem"}, {"AWS_PROFILE=s3cr3t"}} {
		other := filepath.Join(dir, "other")
		code, out, errs := runEnv(append(env, pw...), "keygen", "--output-key-prefix", other)
		name, value, _ := strings.Cut(env[0], "=")
		if code != ExitInvalid || out != "" || !strings.Contains(errs, "entry "+name+":") {
			t.Errorf("a run with %q: exit %d, stdout %q; want 2 naming it\n%s", env, code, out, errs)
		}
		if value != "" && strings.Contains(errs, value) {
			t.Errorf("the refusal of %q shows its value:\n%s", env, errs)
		}
		if _, err := os.Stat(other + ".key"); !os.IsNotExist(err) {
			t.Errorf("a run refused for %q wrote a key (%v)", env, err)
		}
	}
}

// s3Recorder is an S3 server (gofakes3 with bucket releases, or one that
// answers every request 503 when down) that records the credential scope
// (key ID/date/region/service) of every request it gets.
type s3Recorder struct {
	*httptest.Server
	mu     sync.Mutex
	scopes []string
}

var credentialScope = regexp.MustCompile(`Credential=([^/,]+)/[0-9]+/([^/,]+)/s3/`)

func newS3Recorder(t *testing.T, down bool) *s3Recorder {
	backend := s3mem.New()
	if err := backend.CreateBucket("releases"); err != nil {
		t.Fatal(err)
	}
	fake := gofakes3.New(backend).Server()
	rec := &s3Recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope := "none"
		if m := credentialScope.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
			scope = m[1] + " " + m[2]
		}
		rec.mu.Lock()
		rec.scopes = append(rec.scopes, scope)
		rec.mu.Unlock()
		if down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

// got returns the scopes of the requests since the last call.
func (r *s3Recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.scopes
	r.scopes = nil
	return out
}

// TestRunScopesTheAWSEnvironment: a run's own AWS variables (Run's env)
// reach its S3 client (endpoint, key, region) ahead of the process's,
// which the SDK still reads for a run without them; they neither change
// the process's environment nor reach the next run. A key ID without its
// secret, or AWS_MAX_ATTEMPTS (which the SDK ignores beside lockstep's
// retryer), is refused (exit 2) before any request, without its value.
func TestRunScopesTheAWSEnvironment(t *testing.T) {
	runs, proc := newS3Recorder(t, false), newS3Recorder(t, false)
	// The process's S3 settings, as the SDK reads them.
	t.Setenv("AWS_ENDPOINT_URL_S3", proc.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "PROCESSKEY")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "PROCESSSECRET")
	t.Setenv("AWS_REGION", "ap-south-1")
	dir := t.TempDir()
	storeTestManifests(t, dir, 2)
	url := "s3://releases/lockstep"
	env := []string{"AWS_ENDPOINT_URL_S3=" + runs.URL, "AWS_ACCESS_KEY_ID=RUNKEY", "AWS_SECRET_ACCESS_KEY=RUNSECRET", "AWS_REGION=eu-west-3"}

	only := func(what string, got []string, want string) {
		t.Helper()
		if len(got) == 0 {
			t.Errorf("%s: no request", what)
		}
		for _, g := range got {
			if g != want {
				t.Errorf("%s: a request signed for %q, want %q (all: %v)", what, g, want, got)
				break
			}
		}
	}
	if code, _, errs := runEnv(env, "publish", "--allow-unsigned", "--store", url, filepath.Join(dir, "g1.json")); code != 0 {
		t.Fatalf("publish with the run's S3: exit %d\n%s", code, errs)
	}
	only("the run with its own S3 settings", runs.got(), "RUNKEY eu-west-3")
	if got := proc.got(); len(got) != 0 {
		t.Errorf("the run with its own S3 settings sent %d requests to the process's endpoint: %v", len(got), got)
	}
	for name, want := range map[string]string{"AWS_ENDPOINT_URL_S3": proc.URL, "AWS_ACCESS_KEY_ID": "PROCESSKEY", "AWS_REGION": "ap-south-1"} {
		if v := os.Getenv(name); v != want {
			t.Errorf("after the run the process's %s is %q, want %q", name, v, want)
		}
	}

	// The next run, without them: the process's settings, through the SDK.
	if code, _, errs := runEnv(nil, "publish", "--allow-unsigned", "--store", url, filepath.Join(dir, "g2.json")); code != 0 {
		t.Fatalf("publish with the process's S3: exit %d\n%s", code, errs)
	}
	only("the next run, without S3 settings of its own", proc.got(), "PROCESSKEY ap-south-1")
	if got := runs.got(); len(got) != 0 {
		t.Errorf("the previous run's S3 settings reached the next run: %d requests %v", len(got), got)
	}
	// The two stores are apart: generation 1 on the run's, 2 on the process's.
	for _, c := range []struct {
		env  []string
		want string
	}{{env, `"generation":1`}, {nil, `"generation":2`}} {
		if code, out, errs := runEnv(c.env, "status", "--store", url, "--release", "web", "--format", "json"); code != 0 || !strings.Contains(strings.ReplaceAll(out, " ", ""), c.want) {
			t.Errorf("status with env %q: exit %d, want %s\n%s\n%s", c.env, code, c.want, out, errs)
		}
	}

	down := newS3Recorder(t, true)

	// Refused before any request, naming the variable, never its value.
	for _, bad := range [][]string{
		{"AWS_ENDPOINT_URL_S3=" + down.URL, "AWS_ACCESS_KEY_ID=RUNKEY"},
		{"AWS_ENDPOINT_URL_S3=" + down.URL, "AWS_SECRET_ACCESS_KEY=RUNSECRET"},
		{"AWS_ENDPOINT_URL_S3=" + down.URL, "AWS_SESSION_TOKEN=RUNTOKEN"},
		{"AWS_ENDPOINT_URL_S3=" + down.URL, "AWS_MAX_ATTEMPTS=s3cr3t-attempts"},
	} {
		code, out, errs := runEnv(bad, "status", "--store", url, "--release", "web")
		name, value, _ := strings.Cut(bad[1], "=")
		if code != ExitInvalid || out != "" || !strings.Contains(errs, name) {
			t.Errorf("a run with %q: exit %d, stdout %q; want 2 naming %s\n%s", bad, code, out, name, errs)
		}
		if strings.Contains(errs, value) {
			t.Errorf("the refusal of %q shows its value:\n%s", bad, errs)
		}
		if got := down.got(); len(got) != 0 {
			t.Errorf("a run refused for %q sent %d requests", bad, len(got))
		}
	}
}
