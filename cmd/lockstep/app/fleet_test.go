package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission/agent"
	"github.com/lockstep-dev/lockstep/internal/testkit/agenttest"
	"github.com/lockstep-dev/lockstep/internal/testkit/awsfake"
	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
	"github.com/lockstep-dev/lockstep/internal/testkit/tlstest"
	"github.com/lockstep-dev/lockstep/verify/fleet"
)

// runFleetCLI runs lockstep with args and returns its exit code, stdout and
// stderr.
func runFleetCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := New()
	a.Writer, a.ErrWriter = &out, &errb
	err := a.RunContext(context.Background(), append([]string{"lockstep"}, args...))
	code := Exit(err, &errb)
	return code, out.String(), errb.String()
}

// fleetFixture writes the fixture manifest and a targets file naming the
// given status URLs, and returns their paths.
func fleetFixture(t *testing.T, urls ...string) (manifestPath, targetsPath string) {
	t.Helper()
	dir := t.TempDir()
	raw, err := fleettest.Manifest(7).Indent()
	if err != nil {
		t.Fatal(err)
	}
	manifestPath = filepath.Join(dir, "release.json")
	targetsPath = filepath.Join(dir, "fleet.txt")
	if err := os.WriteFile(manifestPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(targetsPath, []byte("# the fleet\n"+strings.Join(urls, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return manifestPath, targetsPath
}

func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestFleetCheckCLI(t *testing.T) {
	t.Parallel()
	var goods []string
	for _, id := range []string{"i-01", "i-02", "i-03"} {
		goods = append(goods, agenttest.Serve(t, agenttest.Good(id), agent.ServeOptions{}))
	}
	bad := agenttest.Serve(t, agenttest.Repushed("i-04"), agent.ServeOptions{})
	okManifest, okTargets := fleetFixture(t, goods...)
	badManifest, badTargets := fleetFixture(t, append(goods, bad)...)
	_, downTargets := fleetFixture(t, goods[0], closedPort(t))
	common := []string{"fleet", "check", "--insecure-allow-unsigned", "--timeout", "2s"}
	tests := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"all match", []string{"--manifest", okManifest, "--release", "store-web", "--targets", "file:" + okTargets}, ExitOK, "3 run the release exactly"},
		{"one re-pushed", []string{"--manifest", badManifest, "--release", "store-web", "--targets", "file:" + badTargets}, ExitMismatch, "i-04"},
		{"targets as arguments", []string{"--manifest", okManifest, "--release", "store-web", goods[0], goods[1]}, ExitOK, "2 instances"},
		{"half unreachable", []string{"--manifest", okManifest, "--release", "store-web", "--targets", "file:" + downTargets}, ExitUnverified, "unreachable"},
		{"half unreachable, tolerated", []string{"--manifest", okManifest, "--release", "store-web", "--targets", "file:" + downTargets, "--max-unreachable", "0.5"}, ExitOK, "1 unreachable"},
		{"markdown", []string{"--manifest", badManifest, "--release", "store-web", "--targets", "file:" + badTargets, "--format", "markdown"}, ExitMismatch, "### Divergent"},
		{"no targets", []string{"--manifest", okManifest, "--release", "store-web"}, ExitInvalid, ""},
		{"bad target", []string{"--manifest", okManifest, "--release", "store-web", "--targets", "rds:x"}, ExitInvalid, ""},
		{"bad fraction", []string{"--manifest", okManifest, "--release", "store-web", "--targets", "file:" + okTargets, "--max-unreachable", "2"}, ExitInvalid, ""},
		{"bad format", []string{"--manifest", okManifest, "--release", "store-web", "--targets", "file:" + okTargets, "--format", "yaml"}, ExitInvalid, ""},
		{"no manifest", []string{"--targets", "file:" + okTargets}, ExitInvalid, ""},
		{"an unknown flag", []string{"--manifest", okManifest, "--release", "store-web", "--bogus"}, ExitInvalid, ""},
		{"a malformed timeout", []string{"--manifest", okManifest, "--release", "store-web", "--targets", "file:" + okTargets, "--timeout", "soon"}, ExitInvalid, ""},
	}
	for _, tt := range tests {
		code, out, errOut := runFleetCLI(t, append(common, tt.args...)...)
		if code != tt.code || !strings.Contains(out, tt.out) {
			t.Errorf("%s: exit %d, want %d; stdout:\n%s\nstderr:\n%s", tt.name, code, tt.code, out, errOut)
		}
	}
}

func TestFleetCheckCLIJSONAndReport(t *testing.T) {
	t.Parallel()
	good := agenttest.Serve(t, agenttest.Good("i-01"), agent.ServeOptions{})
	bad := agenttest.Serve(t, agenttest.Repushed("i-02"), agent.ServeOptions{})
	m, targets := fleetFixture(t, good, bad)
	reportPath := filepath.Join(t.TempDir(), "fleet.json")
	code, out, errOut := runFleetCLI(t, "fleet", "check", "--insecure-allow-unsigned", "--manifest", m, "--release", "store-web", "--targets", "file:"+targets, "--format", "json", "--report", reportPath)
	if code != ExitMismatch {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, errOut)
	}
	saved, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{"stdout": out, "--report": string(saved)} {
		var r fleet.Report
		if err := json.Unmarshal([]byte(doc), &r); err != nil {
			t.Fatalf("%s is not a report: %v", name, err)
		}
		if len(r.Divergent) != 1 || r.Divergent[0].Name != "i-02" || len(r.InUse) != 1 || len(r.InUse[0].ImageDigests) != 2 {
			t.Errorf("%s: divergent %+v inUse %+v", name, r.Divergent, r.InUse)
		}
	}
	code, out, _ = runFleetCLI(t, "fleet", "check", "--insecure-allow-unsigned", "--manifest", m, "--release", "store-web", "--targets", "file:"+targets, "--format", "sarif")
	var sarif struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &sarif); err != nil || code != ExitMismatch || sarif.Version != "2.1.0" || len(sarif.Runs[0].Results) != 2 {
		t.Errorf("sarif: exit %d, %v, %+v", code, err, sarif)
	}
}

func TestFleetCheckCLIToken(t *testing.T) {
	t.Parallel()
	secret := agenttest.Serve(t, agenttest.Good("i-01"), agent.ServeOptions{Token: []byte("s3cret")})
	m, targets := fleetFixture(t, secret)
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600)
	if code, out, errOut := runFleetCLI(t, "fleet", "check", "--insecure-allow-unsigned", "--manifest", m, "--release", "store-web", "--targets", "file:"+targets); code != ExitUnverified || !strings.Contains(out, "unauthorized") {
		t.Errorf("without the token: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runFleetCLI(t, "fleet", "check", "--insecure-allow-unsigned", "--manifest", m, "--release", "store-web", "--targets", "file:"+targets, "--token-file", tokenFile); code != ExitOK {
		t.Errorf("with the token: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestFleetCheckCLIDiscoversThroughAWS(t *testing.T) {
	srv := httptest.NewServer(agenttest.Agent(t, agenttest.Good("i-01")).Handler(agent.ServeOptions{}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	fake := &awsfake.AWS{Instances: []awsfake.Instance{
		{ID: "i-01", PrivateIP: "127.0.0.1", ASG: "web"},
		{ID: "i-02", ASG: "web"}, // booting: no address yet
	}}
	aws := httptest.NewServer(fake)
	defer aws.Close()
	fakeAWSEnv(t, aws.URL)
	m, _ := fleetFixture(t)
	code, out, errOut := runFleetCLI(t, "fleet", "check", "--insecure-allow-unsigned", "--manifest", m, "--release", "store-web", "--targets", "asg:web",
		"--agent-port", fmt.Sprint(port), "--max-unreachable", "0.5", "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var r fleet.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Summary.Match != 1 || len(r.Unreachable) != 1 || r.Unreachable[0].Name != "i-02" || r.Unreachable[0].Problem.Kind != fleet.ProblemNoAddress {
		t.Errorf("summary %+v unreachable %+v: want i-01 matching and i-02 without an address", r.Summary, r.Unreachable)
	}
	if groups, instances := len(fake.Calls("DescribeAutoScalingGroups")), len(fake.Calls("DescribeInstances")); groups != 1 || instances != 1 {
		t.Errorf("AWS calls: DescribeAutoScalingGroups %d, DescribeInstances %d; want 1 each", groups, instances)
	}
}

func TestFleetCheckCLIClientCertificates(t *testing.T) {
	t.Parallel()
	pki := tlstest.NewPKI(t)
	cfg, err := agent.ServerTLS(pki.ServerCert, pki.ServerKey, pki.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(agenttest.Agent(t, agenttest.Good("i-01")).Handler(agent.ServeOptions{TLS: cfg}))
	srv.TLS = cfg
	srv.StartTLS()
	defer srv.Close()
	m, targets := fleetFixture(t, srv.URL+fleet.StatusPath)
	base := []string{"fleet", "check", "--insecure-allow-unsigned", "--manifest", m, "--release", "store-web", "--targets", "file:" + targets, "--ca-cert", pki.CAFile}
	if code, out, errOut := runFleetCLI(t, base...); code != ExitUnverified || !strings.Contains(out, "unauthorized") {
		t.Errorf("without a client certificate: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runFleetCLI(t, append(base, "--client-cert", pki.ClientCert, "--client-key", pki.ClientKey)...); code != ExitOK {
		t.Errorf("with a client certificate: exit %d\n%s\n%s", code, out, errOut)
	}
}

// fakeAWSEnv points the SDK's configuration at an AWS fake, with static
// credentials and no shared files or instance metadata.
func fakeAWSEnv(t *testing.T, url string) {
	t.Setenv("AWS_ENDPOINT_URL", url)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "SECRET")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
}
