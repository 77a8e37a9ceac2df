package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/agent"
	"github.com/lockstep-dev/lockstep/internal/testkit/agenttest"
	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

type instanceSpec = agenttest.Instance

func good(id string) instanceSpec { return agenttest.Good(id) }

func startAgent(t *testing.T, spec instanceSpec, o agent.ServeOptions) string {
	return agenttest.Serve(t, spec, o)
}

func targetsOf(urls ...string) []Target {
	out := make([]Target, len(urls))
	for i, u := range urls {
		out[i] = Target{URL: u, Spec: "test"}
	}
	return out
}

func find(r *Report, name string) (Instance, bool) {
	for _, list := range [][]Instance{r.Divergent, r.Unreachable} {
		for _, in := range list {
			if in.Name == name {
				return in, true
			}
		}
	}
	return Instance{}, false
}

func kinds(ds []Difference) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Kind)
	}
	return out
}

func TestCheckNamesTheRepushedInstance(t *testing.T) {
	var urls []string
	for _, id := range []string{"i-01", "i-02", "i-03", "i-04"} {
		urls = append(urls, startAgent(t, good(id), agent.ServeOptions{}))
	}
	urls = append(urls, startAgent(t, agenttest.Repushed("i-05"), agent.ServeOptions{}))

	r, err := Check(context.Background(), fleettest.Signed(t, 7), targetsOf(urls...), Options{})
	if !verdict.IsMismatch(err) {
		t.Fatalf("Check = %v, want a mismatch", err)
	}
	if s := r.Summary; s.Instances != 5 || s.Match != 4 || s.Divergent != 1 || s.Unreachable != 0 || s.Result != ResultDivergent {
		t.Errorf("summary = %+v, want 4 of 5 matching, 1 divergent", s)
	}
	if len(r.Divergent) != 1 || r.Divergent[0].Name != "i-05" {
		t.Fatalf("divergent = %+v, want exactly i-05", r.Divergent)
	}
	in := r.Divergent[0]
	if got := strings.Join(kinds(in.Differences), ","); got != "image-digest,assets" {
		t.Fatalf("i-05 differences = %s, want image-digest,assets", got)
	}
	img, assets := in.Differences[0], in.Differences[1]
	if img.Got != fleettest.Repushed.String() || strings.Join(img.Want, " ") != fleettest.Index.String()+" "+fleettest.Amd64.String()+" "+fleettest.Amd64Cfg.String() {
		t.Errorf("image difference = %+v, want got the re-pushed digest, want the amd64 digests", img)
	}
	if len(assets.Assets) != 1 || assets.Assets[0] != "assets/app-ffff.js" {
		t.Errorf("assets difference = %+v, want assets/app-ffff.js", assets)
	}
	if len(r.Groups) != 2 || r.Groups[0].Count != 4 || !r.Groups[0].Match || r.Groups[1].Match {
		t.Errorf("groups = %+v, want 4 matching and 1 divergent", r.Groups)
	}
	if len(r.InUse) != 1 || len(r.InUse[0].ImageDigests) != 2 || r.InUse[0].Instances != 5 {
		t.Errorf("inUse = %+v, want one manifest with two image digests", r.InUse)
	}
}

func TestCheckDifferences(t *testing.T) {
	arm := good("i-arm")
	arm.Platform, arm.Running = "linux/arm64", fleettest.Arm64Cfg
	armOnAmd := good("i-arm-on-amd")
	armOnAmd.Running = fleettest.Arm64
	behind := good("i-behind")
	behind.Generation = 6
	cdn := good("i-cdn")
	cdn.Allowed, cdn.Findings = false, []admission.Kind{admission.KindAssetMissingOnCDN}
	unobserved := good("i-unobserved")
	unobserved.Running = manifest.Digest{}
	partial := good("i-partial")
	partial.Served = []string{"index.html"}
	tests := []struct {
		spec instanceSpec
		want string
	}{
		{good("i-ok"), ""},
		{arm, ""},
		{partial, ""},
		{armOnAmd, "image-digest"},
		{behind, "generation"},
		{cdn, "not-admitted"},
		{unobserved, "image-digest"},
	}
	for _, tt := range tests {
		u := startAgent(t, tt.spec, agent.ServeOptions{})
		r, _ := Check(context.Background(), fleettest.Signed(t, 7), targetsOf(u), Options{})
		got := ""
		if len(r.Divergent) == 1 {
			got = strings.Join(kinds(r.Divergent[0].Differences), ",")
		}
		if got != tt.want || len(r.Unreachable) != 0 {
			t.Errorf("%s: differences %q (unreachable %+v), want %q", tt.spec.ID, got, r.Unreachable, tt.want)
		}
	}
}

// slowServer answers nothing until the request is abandoned or the test
// ends.
func slowServer(t *testing.T) *httptest.Server {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv
}

func TestCheckUnusableInstances(t *testing.T) {
	t.Parallel() // its own servers; most of its time is the slow instance timing out
	slow := slowServer(t)
	notJSON := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>hello</html>"))
	}))
	defer notJSON.Close()
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"apiVersion":"lockstep.dev/v1","kind":"AgentStatus","pad":"`))
		w.Write([]byte(strings.Repeat("x", 64<<10)))
		w.Write([]byte(`"}`))
	}))
	defer huge.Close()
	wrongKind := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"apiVersion":"v1","kind":"Pod"}`))
	}))
	defer wrongKind.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + StatusPath
	ln.Close()
	pending := agent.New(agent.Config{Checker: agent.CheckerFunc(func(context.Context) agent.Result { return agent.Result{} })})
	pendingSrv := httptest.NewServer(pending.Handler(agent.ServeOptions{}))
	defer pendingSrv.Close()
	secret := startAgent(t, good("i-secret"), agent.ServeOptions{Token: []byte("s3cret")})

	want := map[string]string{
		closed:                        ProblemUnreachable,
		slow.URL + StatusPath:         ProblemTimeout,
		notJSON.URL + StatusPath:      ProblemInvalid,
		huge.URL + StatusPath:         ProblemOversized,
		wrongKind.URL + StatusPath:    ProblemInvalid,
		pendingSrv.URL + StatusPath:   ProblemPending,
		secret:                        ProblemUnauthorized,
		pendingSrv.URL + "/elsewhere": ProblemHTTPStatus,
		"":                            ProblemNoAddress,
	}
	var ts []Target
	for u := range want {
		ts = append(ts, Target{URL: u, InstanceID: "", Spec: "test"})
	}
	good := startAgent(t, good("i-good"), agent.ServeOptions{})
	ts = append(ts, Target{URL: good, Spec: "test"})
	// Short backoff, so that the closed port's retries end before its
	// timeout. The timeout is what the slow instance meets; every other
	// answers at once, but under -race on a loaded machine not always
	// within the 300 ms this once had, so it is two seconds.
	const timeout = 2 * time.Second
	client := transport.New(transport.Policy{Timeout: timeout, BaseDelay: 5 * time.Millisecond, MaxDelay: 20 * time.Millisecond})
	r, err := Check(context.Background(), fleettest.Signed(t, 7), ts, Options{Client: client, Timeout: timeout, MaxBody: 32 << 10, MaxUnreachable: 0.1})
	if !verdict.IsUnavailable(err) {
		t.Errorf("Check = %v, want unavailable (9 of 10 unreachable)", err)
	}
	for u, kind := range want {
		in, ok := find(r, u) // unnamed instances are named by their URL

		if !ok || in.Problem == nil || in.Problem.Kind != kind {
			t.Errorf("%q: %+v (problem %+v), want problem %s", u, in, in.Problem, kind)
		}
	}
	if r.Summary.Match != 1 || r.Summary.Unreachable != 9 || r.Summary.Result != ResultUnverified {
		t.Errorf("summary = %+v, want 1 match, 9 unreachable, unverified", r.Summary)
	}
}

func TestCheckDeadline(t *testing.T) {
	slow := slowServer(t)
	var ts []Target
	for i := range 8 {
		ts = append(ts, Target{URL: slow.URL + StatusPath + "?i=" + string(rune('a'+i)), Spec: "test"})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	r, err := Check(ctx, fleettest.Signed(t, 7), ts, Options{Concurrency: 2, Timeout: time.Minute})
	if !verdict.IsUnavailable(err) || r.Summary.Unreachable != 8 {
		t.Fatalf("Check past its deadline = %v, %+v", err, r.Summary)
	}
	for _, in := range r.Unreachable {
		if k := in.Problem.Kind; k != ProblemTimeout && k != ProblemDeadline {
			t.Errorf("%s: problem %s, want timeout or deadline", in.Name, k)
		}
	}
}

func TestThreshold(t *testing.T) {
	tests := []struct {
		n, unreachable, divergent int
		fraction                  float64
		want                      string
	}{
		{10, 1, 0, 0.1, ResultMatch},
		{10, 2, 0, 0.1, ResultUnverified},
		{9, 1, 0, 0.1, ResultUnverified}, // small fleets: any is too many
		{100, 10, 0, 0.1, ResultMatch},
		{100, 11, 0, 0.1, ResultUnverified},
		{100, 50, 1, 0.1, ResultDivergent}, // a known divergence wins
		{3, 0, 0, 0, ResultMatch},
		{3, 1, 0, 0, ResultUnverified},
		{0, 0, 0, 0.1, ResultUnverified},
		{4, 4, 0, 1, ResultMatch},
	}
	m := fleettest.Signed(t, 7)
	for _, tt := range tests {
		var ins []Instance
		for i := range tt.n {
			in := Instance{Name: string(rune('a' + i%26))}
			switch {
			case i < tt.unreachable:
				in.Problem = &Problem{Kind: ProblemUnreachable}
			case i < tt.unreachable+tt.divergent:
				in.Differences = []Difference{{Kind: DiffImage}}
			}
			ins = append(ins, in)
		}
		r := newReport(m, ins, tt.fraction)
		err := r.err()
		if r.Summary.Result != tt.want {
			t.Errorf("%d of %d unreachable, %d divergent, max %g: %s, want %s", tt.unreachable, tt.n, tt.divergent, tt.fraction, r.Summary.Result, tt.want)
		}
		var me *verdict.MismatchError
		var ue *verdict.UnavailableError
		switch tt.want {
		case ResultMatch:
			if err != nil {
				t.Errorf("err = %v for a match", err)
			}
		case ResultDivergent:
			if !errors.As(err, &me) {
				t.Errorf("err = %v, want a *MismatchError", err)
			}
		case ResultUnverified:
			if !errors.As(err, &ue) {
				t.Errorf("err = %v, want an *UnavailableError", err)
			}
		}
	}
}

// A newer agent's status, with fields this version does not know and a
// decision of another shape, is still read.
func TestCheckReadsNewerStatuses(t *testing.T) {
	b, err := json.Marshal(agenttest.Agent(t, agenttest.Good("i-new")).Status())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	json.Unmarshal(b, &doc)
	doc["futureField"] = map[string]any{"x": 1}
	doc["decision"].(map[string]any)["durationNanos"] = "1.5s"
	b, _ = json.Marshal(doc)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(b) }))
	defer srv.Close()
	r, err := Check(context.Background(), fleettest.Signed(t, 7), targetsOf(srv.URL+StatusPath), Options{})
	if err != nil || r.Summary.Match != 1 {
		t.Errorf("Check(newer status) = %+v, %v; unreachable %+v", r.Summary, err, r.Unreachable)
	}
}
