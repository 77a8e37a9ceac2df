package gate_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/gate"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/testkit/awsfake"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/remote"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

const (
	instanceID = "i-0123456789abcdef0"
	region     = "eu-west-1"
	asg        = "store-web"
	hook       = "lockstep-boot-gate"
	tgARN      = "arn:aws:elasticloadbalancing:eu-west-1:111122223333:targetgroup/store-web/0123456789abcdef"
)

var (
	config = manifest.MustParseDigest("sha256:" + strings.Repeat("3", 64))
	other  = manifest.MustParseDigest("sha256:" + strings.Repeat("9", 64))
	policy = transport.Policy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}
)

// env is one instance booting: its release (manifest file, CDN, app
// page) and the AWS endpoints it talks to.
type env struct {
	manifestPath string
	cdn, app     *httptest.Server
	appBlock     chan struct{} // when set, the page waits for it
	cloud        *awsfake.AWS
	imds         *awsfake.IMDS
	files        map[string]string
	mu           sync.Mutex
	regions      []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	files := scenario.Assets("v1", 4)
	e := &env{files: files}
	dir := t.TempDir()
	if err := scenario.WriteFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	e.cdn = httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(e.cdn.Close)
	page := scenario.Page(e.cdn.URL, scenario.Paths(files))
	e.app = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		block := e.appBlock
		e.mu.Unlock()
		if block != nil {
			select {
			case <-block:
			case <-time.After(20 * time.Second):
			}
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(page))
	}))
	t.Cleanup(e.app.Close)
	im := manifest.Image{Name: "web", Ref: "127.0.0.1:5000/web:v1", Repository: "127.0.0.1:5000/web", Digest: manifest.MustParseDigest("sha256:" + strings.Repeat("1", 64)),
		MediaType: "application/vnd.oci.image.manifest.v1+json",
		Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: manifest.MustParseDigest("sha256:" + strings.Repeat("1", 64)), Config: config}}}
	_, raw, err := scenario.Manifest("store-web", 3, []manifest.Image{im}, []string{e.cdn.URL + "/"}, files)
	if err != nil {
		t.Fatal(err)
	}
	e.manifestPath = filepath.Join(t.TempDir(), "m.json")
	if err := os.WriteFile(e.manifestPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	e.cloud = awsfake.NewAWS(t, instanceID)
	e.imds = awsfake.NewIMDS(t, instanceID, region)
	return e
}

// config is a gate with the real SDK clients against the fakes.
func (e *env) config(runningDigest manifest.Digest) gate.Config {
	tc := transport.New(policy)
	hc := &http.Client{Transport: tc.Transport()}
	return gate.Config{
		Check: admission.Config{
			CDN:    cdngate.Checker{},
			Source: manifest.FileSource{Path: e.manifestPath}, AllowUnsigned: true, Image: "web",
			Running: running.Given{Value: runningDigest.String()}, Platform: "linux/amd64",
			Probes: []string{e.app.URL + "/"}, Client: transport.New(policy), Timeout: 20 * time.Second,
		},
		LifecycleHook: hook, AutoScalingGroup: asg, TargetGroup: tgARN, TargetPort: 8080,
		Metadata: imds.New(imds.Options{Endpoint: e.imds.URL, HTTPClient: hc, Retryer: gate.Retryer(policy)}),
		Connect: func(ctx context.Context, r string) (gate.Clients, error) {
			e.mu.Lock()
			e.regions = append(e.regions, r)
			e.mu.Unlock()
			cfg := aws.Config{
				Region:      r,
				Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""),
				HTTPClient:  hc,
				Retryer:     func() aws.Retryer { return gate.Retryer(policy) },
			}
			as := autoscaling.NewFromConfig(cfg, func(o *autoscaling.Options) { o.BaseEndpoint = aws.String(e.cloud.URL) })
			lb := elbv2.NewFromConfig(cfg, func(o *elbv2.Options) { o.BaseEndpoint = aws.String(e.cloud.URL) })
			return gate.Clients{Completer: as, Heartbeater: as, Registrar: lb}, nil
		},
		HeartbeatInterval: time.Hour,
	}
}

func dump(d admission.Decision) string {
	var b strings.Builder
	for _, f := range d.Findings {
		b.WriteString("  " + string(f.Severity) + " " + string(f.Kind) + " " + f.Subject + ": " + f.Message + "\n")
	}
	for _, a := range d.Actions {
		b.WriteString("  action " + a.Kind + " " + a.Result + " " + a.Status + " " + a.Error + "\n")
	}
	return b.String()
}

// completions returns the LifecycleActionResult of each
// CompleteLifecycleAction call, checking the call's other parameters.
func completions(t *testing.T, e *env) []string {
	t.Helper()
	var out []string
	for _, r := range e.cloud.Calls("CompleteLifecycleAction") {
		if r.Get("InstanceId") != instanceID || r.Get("AutoScalingGroupName") != asg || r.Get("LifecycleHookName") != hook {
			t.Errorf("CompleteLifecycleAction with %v", r.Params)
		}
		out = append(out, r.Get("LifecycleActionResult"))
	}
	return out
}

func TestRunAdmitted(t *testing.T) {
	e := newEnv(t)
	d := gate.Run(context.Background(), e.config(config))
	if !d.Allowed {
		t.Fatalf("refused:\n%s", dump(d))
	}
	reqs := e.cloud.Requests()
	if len(reqs) != 2 || reqs[0].Action != "RegisterTargets" || reqs[1].Action != "CompleteLifecycleAction" {
		t.Fatalf("AWS calls = %+v, want RegisterTargets then CompleteLifecycleAction", reqs)
	}
	if r := reqs[0]; r.Get("TargetGroupArn") != tgARN || r.Get("Targets.member.1.Id") != instanceID || r.Get("Targets.member.1.Port") != "8080" {
		t.Errorf("RegisterTargets with %v", r.Params)
	}
	if got := completions(t, e); len(got) != 1 || got[0] != gate.Continue {
		t.Errorf("lifecycle results = %q, want [CONTINUE]", got)
	}
	if paths, tokens := e.imds.Gets(); tokens < 1 || strings.Join(paths, ",") != "/latest/meta-data/instance-id,/latest/meta-data/placement/region" {
		t.Errorf("IMDS: paths %q with %d tokens", paths, tokens)
	}
	if len(e.regions) != 1 || e.regions[0] != region {
		t.Errorf("clients built for regions %q, want [%s]", e.regions, region)
	}
	if len(d.Actions) != 2 || d.Actions[0].Status != admission.ActionDone || d.Actions[1].Status != admission.ActionDone || d.Actions[1].Result != gate.Continue {
		t.Errorf("actions:\n%s", dump(d))
	}
}

func TestRunRefused(t *testing.T) {
	e := newEnv(t)
	d := gate.Run(context.Background(), e.config(other))
	if d.Allowed || !d.Has(admission.KindImageDigestMismatch) {
		t.Fatalf("admitted:\n%s", dump(d))
	}
	if n := len(e.cloud.Calls("RegisterTargets")); n != 0 {
		t.Errorf("a refused instance was registered %d times", n)
	}
	if got := completions(t, e); len(got) != 1 || got[0] != gate.Abandon {
		t.Errorf("lifecycle results = %q, want [ABANDON]", got)
	}
}

func TestRunDryRun(t *testing.T) {
	e := newEnv(t)
	for _, dig := range []manifest.Digest{config, other} {
		cfg := e.config(dig)
		cfg.DryRun = true
		d := gate.Run(context.Background(), cfg)
		if d.Allowed != (dig == config) || !d.DryRun {
			t.Errorf("dry run with %s: Allowed %v DryRun %v", dig, d.Allowed, d.DryRun)
		}
		for _, a := range d.Actions {
			if a.Status != admission.ActionSkipped {
				t.Errorf("dry run acted:\n%s", dump(d))
			}
		}
	}
	if reqs := e.cloud.Requests(); len(reqs) != 0 {
		t.Errorf("a dry run called AWS: %+v", reqs)
	}
}

// TestRunIdempotent loses the answer to a completion: the SDK retries,
// the group says no action is active, and that is success.
func TestRunIdempotent(t *testing.T) {
	e := newEnv(t)
	e.cloud.LoseNextCompletion()
	d := gate.Run(context.Background(), e.config(config))
	if !d.Allowed {
		t.Fatalf("refused after a retried completion:\n%s", dump(d))
	}
	if got := completions(t, e); len(got) != 2 {
		t.Errorf("lifecycle calls = %q, want two attempts", got)
	}
	last := d.Actions[len(d.Actions)-1]
	if last.Status != admission.ActionAlreadyDone || last.Result != gate.Continue {
		t.Errorf("completion action = %+v, want CONTINUE already-done", last)
	}

	// Without a retry, "no active lifecycle action" is a failure.
	e2 := newEnv(t)
	cfg := e2.config(config)
	cfg.InstanceID = "i-00000000000000000"
	d = gate.Run(context.Background(), cfg)
	if d.Allowed || !d.Unverified {
		t.Errorf("completing a lifecycle action that does not exist was accepted:\n%s", dump(d))
	}
}

func TestRunHeartbeat(t *testing.T) {
	e := newEnv(t)
	beat := make(chan struct{})
	var once sync.Once
	var seen atomic.Int32
	// The page answers only once a second heartbeat arrived: the gate
	// sends one after the other, so the first was answered and counted by
	// then. (On the first one's arrival, the check could end and cancel
	// that call before its answer was counted: a loaded runner did.)
	e.cloud.OnHeartbeat(func() {
		if seen.Add(1) >= 2 {
			once.Do(func() { close(beat) })
		}
	})
	e.appBlock = beat
	cfg := e.config(config)
	cfg.HeartbeatInterval = 10 * time.Millisecond
	d := gate.Run(context.Background(), cfg)
	if !d.Allowed {
		t.Fatalf("refused:\n%s", dump(d))
	}
	last := d.Actions[len(d.Actions)-1]
	if last.Heartbeats < 1 {
		t.Errorf("heartbeats = %d, want at least 1", last.Heartbeats)
	}
	for _, r := range e.cloud.Calls("RecordLifecycleActionHeartbeat") {
		if r.Get("InstanceId") != instanceID || r.Get("LifecycleHookName") != hook || r.Get("AutoScalingGroupName") != asg {
			t.Errorf("heartbeat with %v", r.Params)
		}
	}
}

// hang accepts connections and never answers.
func hang(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + l.Addr().String()
}

// TestRunDependencyDown takes each dependency down in turn: the instance
// is refused with dependency-unreachable, the lifecycle action is
// ABANDON (where the group can still be told), and nothing outlives the
// deadline.
func TestRunDependencyDown(t *testing.T) {
	const deadline = 2 * time.Second
	tests := []struct {
		name    string
		down    func(t *testing.T, e *env, cfg *gate.Config)
		abandon bool // ABANDON reaches the group
	}{
		{name: "manifest source", abandon: true, down: func(t *testing.T, e *env, cfg *gate.Config) {
			dead := httptest.NewServer(http.NotFoundHandler())
			dead.Close()
			src, err := remote.New(dead.URL+"/release.json", transport.New(policy))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Check.Source = src
		}},
		{name: "manifest source hangs", abandon: true, down: func(t *testing.T, e *env, cfg *gate.Config) {
			src, err := remote.New(hang(t)+"/release.json", transport.New(policy))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Check.Source = src
		}},
		{name: "Docker socket", abandon: true, down: func(t *testing.T, e *env, cfg *gate.Config) {
			src, err := running.NewDocker("unix://"+filepath.Join(t.TempDir(), "docker.sock"), "web", running.Options{Policy: policy})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Check.Running = src
		}},
		{name: "Docker daemon hangs", abandon: true, down: func(t *testing.T, e *env, cfg *gate.Config) {
			sock := filepath.Join(t.TempDir(), "docker.sock")
			l, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					t.Cleanup(func() { c.Close() })
				}
			}()
			src, _ := running.NewDocker("unix://"+sock, "web", running.Options{Policy: policy})
			cfg.Check.Running = src
		}},
		{name: "CDN", abandon: true, down: func(t *testing.T, e *env, cfg *gate.Config) { e.cdn.Close() }},
		{name: "CDN hangs", abandon: true, down: func(t *testing.T, e *env, cfg *gate.Config) {
			raw, err := os.ReadFile(e.manifestPath)
			if err != nil {
				t.Fatal(err)
			}
			cdn := hang(t)
			raw = []byte(strings.ReplaceAll(string(raw), e.cdn.URL, cdn))
			if err := os.WriteFile(e.manifestPath, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			page := scenario.Page(cdn, scenario.Paths(e.files))
			app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(page)) }))
			t.Cleanup(app.Close)
			cfg.Check.Probes = []string{app.URL + "/"}
		}},
		{name: "app hangs", abandon: true, down: func(t *testing.T, e *env, cfg *gate.Config) { cfg.Check.Probes = []string{hang(t) + "/"} }},
		{name: "app under probe", abandon: true, down: func(t *testing.T, e *env, cfg *gate.Config) { e.app.Close() }},
		{name: "AWS endpoint", down: func(t *testing.T, e *env, cfg *gate.Config) { e.cloud.Close() }},
		{name: "ELBv2 failing", abandon: true, down: func(t *testing.T, e *env, cfg *gate.Config) { e.cloud.Fail("RegisterTargets", 100) }},
		{name: "instance metadata", down: func(t *testing.T, e *env, cfg *gate.Config) { e.imds.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			cfg := e.config(config)
			cfg.Check.Timeout = deadline
			tt.down(t, e, &cfg)
			start := time.Now()
			d := gate.Run(context.Background(), cfg)
			elapsed := time.Since(start)
			if elapsed > deadline+2*time.Second {
				t.Errorf("Run took %s, past its deadline of %s", elapsed, deadline)
			}
			if d.Allowed || !d.Has(admission.KindDependencyUnreachable) {
				t.Fatalf("not refused with dependency-unreachable:\n%s", dump(d))
			}
			if strings.Contains(dump(d), "while starting") {
				t.Errorf("the check never ran: a dependency ate its time:\n%s", dump(d))
			}
			if !d.Unverified {
				t.Errorf("Unverified = false, want true (exit 3):\n%s", dump(d))
			}
			if tt.abandon {
				if got := completions(t, e); len(got) != 1 || got[0] != gate.Abandon {
					t.Errorf("lifecycle results = %q, want [ABANDON]\n%s", got, dump(d))
				}
			}
			if n := len(e.cloud.Calls("RegisterTargets")); n != 0 && tt.name != "ELBv2 failing" {
				t.Errorf("registered with the target group %d times", n)
			}
			var hookAction *admission.Action
			for i := range d.Actions {
				if d.Actions[i].Kind == "complete-lifecycle-action" {
					hookAction = &d.Actions[i]
				}
			}
			if hookAction == nil || hookAction.Result != gate.Abandon {
				t.Errorf("no ABANDON action in the decision:\n%s", dump(d))
			}
		})
	}
}

// TestRunCancelled stops the gate (SIGTERM) before it decides: refused,
// and the group still hears ABANDON.
func TestRunCancelled(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := gate.Run(ctx, e.config(config))
	if d.Allowed || !d.Unverified {
		t.Fatalf("a cancelled gate was not refused as unverified:\n%s", dump(d))
	}
	if got := completions(t, e); len(got) != 1 || got[0] != gate.Abandon {
		t.Errorf("lifecycle results = %q, want [ABANDON]\n%s", got, dump(d))
	}
}
