package app

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/lockstep-dev/lockstep/internal/testkit/awsfake"
	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
	"github.com/lockstep-dev/lockstep/internal/testkit/kubefake"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/fleet"
)

// TestAttackAgentlessRoles (issue 35, item 2): `fleet check --targets
// k8s:…|ecs:…` judges each container against the release image its spec
// names (its repository, then its container name or tag), on the platform
// of its node or task, never against whichever image of the release has
// the digest it runs. Each case is one container of a release of four
// images (web, an index; worker; api and jobs, two roles of one
// repository), read by the real CLI from the Kubernetes API fake or the
// ECS protocol fake; it asserts the exit code and, for a refusal, the
// divergent container and its image difference.
func TestAttackAgentlessRoles(t *testing.T) {
	d := func(c string) manifest.Digest { return manifest.MustParseDigest("sha256:" + strings.Repeat(c, 64)) }
	worker, api, jobs := d("a"), d("c"), d("e")
	m := fleettest.Manifest(7)
	single := func(name, repo, tag string, dg, cfg manifest.Digest) manifest.Image {
		return manifest.Image{Name: name, Ref: repo + ":" + tag, Repository: repo, Tag: tag, Digest: dg, MediaType: "application/vnd.oci.image.manifest.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: dg, Config: cfg}}}
	}
	m.Images = append(m.Images,
		single("worker", "registry.example/store/worker", "v1", worker, d("b")),
		single("api", "registry.example/store/app", "api-v1", api, d("d")),
		single("jobs", "registry.example/store/app", "jobs-v1", jobs, d("f")),
		single("local", "127.0.0.1:5000/store/local", "v1", d("7"), d("8")))
	man := writeManifestFile(t, m, filepath.Join(t.TempDir(), "release.json"))
	web := "registry.example/store/web:v1"

	type container struct{ name, image, node, arch string }
	cases := []struct {
		name    string
		c       container
		running manifest.Digest
		code    int
	}{
		{"control: web's index on an amd64 node", container{"web", web, "n-amd64", ""}, fleettest.Index, ExitOK},
		{"control: api by its role, running api", container{"api", "registry.example/store/app:api-v1", "n-amd64", ""}, api, ExitOK},
		{"Epic: web's tag re-pushed with worker's bytes", container{"web", web, "n-amd64", ""}, worker, ExitMismatch},
		{"Epic: worker's tag re-pushed with web's index", container{"worker", "registry.example/store/worker:v1", "n-amd64", ""}, fleettest.Index, ExitMismatch},
		{"Epic: api's role re-pushed with jobs' bytes", container{"api", "registry.example/store/app:api-v1", "n-amd64", ""}, jobs, ExitMismatch},
		{"Epic: a sidecar on api's tag runs jobs' bytes", container{"proxy", "registry.example/store/app:api-v1", "n-amd64", ""}, jobs, ExitMismatch},
		{"a shared repository by digest alone names no role", container{"proxy", "registry.example/store/app@" + api.String(), "n-amd64", ""}, api, ExitMismatch},
		{"web's arm64 manifest on an amd64 node", container{"web", web, "n-amd64", ""}, fleettest.Arm64, ExitMismatch},
		{"web's index on an s390x node", container{"web", web, "n-s390x", ""}, fleettest.Index, ExitMismatch},
		{"another repository running web's index", container{"web", "registry.example/store/other:v1", "n-amd64", ""}, fleettest.Index, ExitMismatch},
		{"class 5 in the fleet: local by 0x7f.1", container{"local", "0x7f.1:5000/store/local:v1", "n-amd64", ""}, d("7"), ExitOK},
		{"class 5 in the fleet: local by 2130706433, running web's index", container{"local", "2130706433:5000/store/local:v1", "n-amd64", ""}, fleettest.Index, ExitMismatch},
		{"ECS: web's tag re-pushed with worker's bytes", container{"web", web, "", "x86_64"}, worker, ExitMismatch},
		{"ECS: web's arm64 config on an x86_64 task", container{"web", web, "", "x86_64"}, fleettest.Arm64Cfg, ExitMismatch},
		{"ECS control: web's arm64 config on an arm64 task", container{"web", web, "", "arm64"}, fleettest.Arm64Cfg, ExitOK},
	}
	for i, tt := range cases {
		t.Run("class fleet/"+tt.name, func(t *testing.T) {
			var target, name string
			if tt.c.arch != "" {
				aws := awsfake.NewAWS(t)
				aws.ECSServices = map[string][]awsfake.ECSTask{"prod/svc": {{ARN: fmt.Sprintf("arn:aws:ecs:us-east-1:123456789012:task/prod/t%d", i), CPUArchitecture: tt.c.arch,
					Containers: []awsfake.ECSContainer{{Name: tt.c.name, Image: tt.c.image, ImageDigest: tt.running.String()}}}}}
				fakeAWSEnv(t, aws.URL)
				target, name = "ecs:prod/svc", fmt.Sprintf("t%d/%s", i, tt.c.name)
			} else {
				kf := kubefake.New(t)
				kf.Nodes = []corev1.Node{kubefake.Node("n-amd64", "linux", "amd64"), kubefake.Node("n-s390x", "linux", "s390x")}
				p := kubefake.Pod("store", "p", nil, tt.c.image, "docker-pullable://x@"+tt.running.String())
				p.Spec.NodeName = tt.c.node
				p.Spec.Containers[0].Name, p.Status.ContainerStatuses[0].Name = tt.c.name, tt.c.name
				kf.Pods = []corev1.Pod{p}
				target, name = "k8s:store", "store/p/"+tt.c.name
				t.Setenv("KUBECONFIG", writeKubeconfig(t, kf))
			}
			code, out, errOut := runFleetCLI(t, "fleet", "check", "--insecure-allow-unsigned", "--manifest", man, "--release", "store-web",
				"--format", "json", "--targets", target)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tt.code, out, errOut)
			}
			var r fleet.Report
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("report: %v\n%s", err, out)
			}
			if tt.code == ExitOK {
				if r.Summary.Match != 1 || len(r.Divergent) != 0 {
					t.Errorf("summary %+v, divergent %+v; want the container matching", r.Summary, r.Divergent)
				}
				return
			}
			if len(r.Divergent) != 1 || r.Divergent[0].Name != name || len(r.Divergent[0].Differences) != 1 || r.Divergent[0].Differences[0].Kind != fleet.DiffImage {
				t.Errorf("divergent %+v; want %s with one %s difference", r.Divergent, name, fleet.DiffImage)
			}
		})
	}
}
