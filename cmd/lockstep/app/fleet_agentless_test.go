package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/lockstep-dev/lockstep/internal/testkit/awsfake"
	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
	"github.com/lockstep-dev/lockstep/internal/testkit/kubefake"
)

// TestFleetCheckCLIAgentless checks an ECS service and a Kubernetes
// namespace in one run, through the AWS configuration and a kubeconfig.
func TestFleetCheckCLIAgentless(t *testing.T) {
	aws := awsfake.NewAWS(t)
	aws.ECSServices = map[string][]awsfake.ECSTask{"prod/web": {{ARN: "arn:aws:ecs:us-east-1:123456789012:task/prod/t1",
		Containers: []awsfake.ECSContainer{{Name: "web", Image: "registry.example/store/web:v1", ImageDigest: fleettest.Index.String()}}}}}
	fakeAWSEnv(t, aws.URL)
	kf := kubefake.New(t)
	kf.Pods = []corev1.Pod{kubefake.Pod("store", "web-1", nil, "registry.example/store/web:v1", fleettest.Amd64Cfg.String())}
	kubeconfig := writeKubeconfig(t, kf)
	t.Setenv("KUBECONFIG", "")
	m, _ := fleetFixture(t)
	code, out, errOut := runFleetCLI(t, "fleet", "check", "--insecure-allow-unsigned", "--manifest", m, "--release", "store-web",
		"--targets", "ecs:prod/web", "--targets", "k8s:store", "--kubeconfig", kubeconfig)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "2 read from an orchestrator without an agent") || !strings.Contains(out, "     2  match     running "+fleettest.Index.String()+"  assets not visible (agentless)") {
		t.Errorf("report:\n%s\nwant the ECS and Kubernetes containers as one agentless group", out)
	}
	code, _, errOut = runFleetCLI(t, "fleet", "check", "--insecure-allow-unsigned", "--manifest", m, "--release", "store-web",
		"--targets", "k8s:store", "--kubeconfig", filepath.Join(t.TempDir(), "missing"))
	if code != ExitInvalid {
		t.Errorf("a missing kubeconfig: exit %d, want %d\n%s", code, ExitInvalid, errOut)
	}
}

// TestFleetCheckSelectorCommas (issue 37): a label selector holds commas
// (docs/fleet.md's k8s:store/app=web,tier!=canary, a set "app in
// (web,api)"): --targets and the arguments take it whole, exit 0, and the
// API server is asked for exactly that selector.
func TestFleetCheckSelectorCommas(t *testing.T) {
	t.Parallel()
	kf := kubefake.New(t)
	kf.Pods = []corev1.Pod{
		kubefake.Pod("store", "web-1", map[string]string{"app": "web", "tier": "main"}, "registry.example/store/web:v1", fleettest.Amd64Cfg.String()),
		// Divergent, and left out by every selector below.
		kubefake.Pod("store", "web-canary", map[string]string{"app": "web", "tier": "canary"}, "registry.example/store/web:v1", fleettest.Repushed.String()),
	}
	kubeconfig := writeKubeconfig(t, kf)
	m, _ := fleetFixture(t)
	for _, sel := range []string{"app=web,tier!=canary", "app in (web,api),tier notin (canary)", "app,tier!=canary"} {
		for _, how := range [][]string{{"--targets", "k8s:store/" + sel}, {"k8s:store/" + sel}} {
			before := len(kf.Requests())
			args := append([]string{"fleet", "check", "--insecure-allow-unsigned", "--manifest", m, "--release", "store-web", "--kubeconfig", kubeconfig}, how...)
			code, out, errOut := runFleetCLI(t, args...)
			if code != ExitOK || !strings.Contains(out, "     1  match") {
				t.Errorf("%q: exit %d, want %d and web-1 alone\n%s\n%s", how, code, ExitOK, out, errOut)
			}
			for _, q := range kf.Requests()[before:] {
				if got := q.URL.Query().Get("labelSelector"); got != sel {
					t.Errorf("%q: the API server was asked for labelSelector %q, want %q", how, got, sel)
				}
			}
		}
	}
}

// writeKubeconfig writes a kubeconfig for the fake's server and token.
func writeKubeconfig(t *testing.T, kf *kubefake.API) string {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: test
contexts:
- name: test
  context: {cluster: fake, user: reader}
clusters:
- name: fake
  cluster: {server: %q}
users:
- name: reader
  user: {token: %q}
`, kf.URL, kubefake.Token)), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// TestFleetCheckMalformedSelector: a label selector or namespace the API
// server would refuse is a usage error (exit 2) that names it, and no
// request is sent.
func TestFleetCheckMalformedSelector(t *testing.T) {
	t.Parallel()
	kf := kubefake.New(t)
	kubeconfig := writeKubeconfig(t, kf)
	m, _ := fleetFixture(t)
	for _, tc := range []struct{ spec, want string }{
		{"k8s:store/app in (web", `label selector "app in (web"`},
		{"k8s:store/app=web=x", `label selector "app=web=x"`},
		{"k8s:store/app=web,,tier", `label selector "app=web,,tier"`},
		{"k8s:store/app=we b", `label selector "app=we b"`},
		{"k8s:Store/app=web", `namespace "Store"`},
		{"k8s:store_web", `namespace "store_web"`},
		{"k8s:" + strings.Repeat("n", 64), "namespace"},
	} {
		before := len(kf.Requests())
		code, out, errOut := runFleetCLI(t, "fleet", "check", "--insecure-allow-unsigned", "--manifest", m, "--release", "store-web",
			"--kubeconfig", kubeconfig, "--targets", tc.spec)
		if code != ExitInvalid || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming %s\n%s", tc.spec, code, errOut, tc.want, out)
		}
		if n := len(kf.Requests()) - before; n != 0 {
			t.Errorf("%q: %d requests reached the API server; want none", tc.spec, n)
		}
	}
}
