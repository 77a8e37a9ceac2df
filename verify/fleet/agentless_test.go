package fleet_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	corev1 "k8s.io/api/core/v1"

	"github.com/lockstep-dev/lockstep/admission/agent"
	"github.com/lockstep-dev/lockstep/internal/testkit/agenttest"
	"github.com/lockstep-dev/lockstep/internal/testkit/awsfake"
	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
	"github.com/lockstep-dev/lockstep/internal/testkit/kubefake"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
	"github.com/lockstep-dev/lockstep/verify/fleet"
	"github.com/lockstep-dev/lockstep/verify/fleet/kube"
)

const webRef = "registry.example/store/web:v1"

// ecsClient is the real SDK client pointed at the AWS protocol fake, over
// the shared transport.
func ecsClient(f *awsfake.AWS) *ecs.Client {
	return ecs.New(ecs.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(f.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "SECRET", ""),
		HTTPClient:  &http.Client{Transport: transport.New(transport.DefaultPolicy()).Transport()},
	})
}

// kubeClient is the Kubernetes client pointed at the API fake, over the
// shared transport.
func kubeClient(f *kubefake.API) *kube.Client {
	return &kube.Client{Config: &kube.Config{Server: f.URL, Token: kubefake.Token}, HTTP: transport.New(transport.DefaultPolicy()).HTTPClient()}
}

// ecsService is n tasks of one container; digest(i) is what the i-th
// reports.
func ecsService(n int, digest func(i int) string) []awsfake.ECSTask {
	tasks := make([]awsfake.ECSTask, n)
	for i := range tasks {
		tasks[i] = awsfake.ECSTask{
			ARN:        fmt.Sprintf("arn:aws:ecs:us-east-1:123456789012:task/prod/%032x", i),
			Containers: []awsfake.ECSContainer{{Name: "web", Image: webRef, ImageDigest: digest(i)}},
		}
	}
	return tasks
}

func namespacePods(n int, imageID func(i int) string) []corev1.Pod {
	pods := make([]corev1.Pod, n)
	for i := range pods {
		pods[i] = kubefake.Pod("store", fmt.Sprintf("web-%05d", i), map[string]string{"app": "web"}, webRef, imageID(i))
	}
	return pods
}

func TestAgentlessECS(t *testing.T) {
	f := awsfake.NewAWS(t)
	f.PageSize = 3
	tasks := ecsService(7, func(i int) string { return fleettest.Index.String() })
	tasks[5].Containers[0].ImageDigest = fleettest.Repushed.String()
	tasks[6].LastStatus = "STOPPED"
	tasks = append(tasks, awsfake.ECSTask{ARN: "arn:aws:ecs:us-east-1:123456789012:task/prod/arm", CPUArchitecture: "arm64",
		Containers: []awsfake.ECSContainer{{Name: "web", Image: webRef, ImageDigest: fleettest.Arm64.String()}}})
	f.ECSServices = map[string][]awsfake.ECSTask{"prod/web": tasks}
	ctx := context.Background()
	o := fleet.DiscoverOptions{ECS: ecsClient(f)}
	targets, err := fleet.Discover(ctx, []string{"ecs:prod/web"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 7 {
		t.Fatalf("Discover = %d targets, want 7 (the stopped task left out)", len(targets))
	}
	if n := len(f.Calls("ListTasks")); n != 3 {
		t.Errorf("ListTasks calls = %d, want 3 pages of 3", n)
	}
	if got := targets[6].Observed.Platform; got != "linux/arm64" {
		t.Errorf("arm task platform = %q, want linux/arm64", got)
	}
	r, err := fleet.Check(ctx, fleettest.Signed(t, 7), targets, fleet.Options{})
	if !verdict.IsMismatch(err) {
		t.Fatalf("Check = %v, want a mismatch", err)
	}
	if s := r.Summary; s.Instances != 7 || s.Match != 6 || s.Divergent != 1 || s.Agentless != 7 {
		t.Errorf("summary = %+v, want 6 of 7 matching, all agentless", s)
	}
	if len(r.Divergent) != 1 || r.Divergent[0].Name != fmt.Sprintf("%032x/web", 5) || r.Divergent[0].Differences[0].Kind != fleet.DiffImage {
		t.Errorf("divergent = %+v, want task 5's container, an image difference", r.Divergent)
	}
	if len(r.Groups) != 2 || r.Groups[0].Count != 6 || !r.Groups[0].Match || r.Groups[0].Running != fleettest.Index.String() || !r.Groups[0].Agentless {
		t.Errorf("groups = %+v, want 6 matching (index and arm64 manifest digests together) and 1 divergent", r.Groups)
	}
	if len(r.InUse) != 2 || r.InUse[1].ManifestDigest != r.Manifest.Digest || r.InUse[1].Instances != 6 || r.InUse[0].ManifestDigest != "" {
		t.Errorf("inUse = %+v, want the release's manifest (6) and the re-pushed digest under none", r.InUse)
	}
}

func TestAgentlessECSErrors(t *testing.T) {
	f := awsfake.NewAWS(t)
	f.ECSServices = map[string][]awsfake.ECSTask{"prod/web": ecsService(1, func(int) string { return fleettest.Index.String() })}
	o := fleet.DiscoverOptions{ECS: ecsClient(f)}
	for _, spec := range []string{"ecs:prod/nope", "ecs:nope/web", "ecs:prod", "ecs:/web"} {
		_, err := fleet.Discover(context.Background(), []string{spec}, o)
		var se *fleet.SpecError
		if !errors.As(err, &se) {
			t.Errorf("Discover(%s) = %v, want a *SpecError", spec, err)
		}
	}
	f.Fail("DescribeTasks", 100)
	_, err := fleet.Discover(context.Background(), []string{"ecs:prod/web"}, o)
	if !verdict.IsUnavailable(err) {
		t.Errorf("Discover with DescribeTasks failing = %v, want unavailable", err)
	}
}

// TestAgentlessKubernetes: imageID in each form kubernetes#115199 lists
// (a manifest digest after repo@, an index digest, a bare config digest)
// is one group; a pod not running yet and one of another selector are left
// out; an empty imageID is a digest not observed.
func TestAgentlessKubernetes(t *testing.T) {
	f := kubefake.New(t)
	forms := []string{
		"docker-pullable://registry.example/store/web@" + fleettest.Amd64.String(),
		"registry.example/store/web@" + fleettest.Index.String(),
		fleettest.Amd64Cfg.String(),
	}
	f.Pods = namespacePods(9, func(i int) string { return forms[i%3] })
	f.Pods[7].Status.Phase = corev1.PodPending
	f.Pods[8].Labels = map[string]string{"app": "api"}
	f.Pods = append(f.Pods, kubefake.Pod("store", "web-starting", map[string]string{"app": "web"}, webRef, ""))
	f.Pods = append(f.Pods, kubefake.Pod("other", "web-x", map[string]string{"app": "web"}, webRef, forms[0]))
	ctx := context.Background()
	targets, err := fleet.Discover(ctx, []string{"k8s:store/app=web"}, fleet.DiscoverOptions{Kubernetes: kubeClient(f)})
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 8 {
		t.Fatalf("Discover = %d targets, want 8", len(targets))
	}
	r, err := fleet.Check(ctx, fleettest.Signed(t, 7), targets, fleet.Options{})
	if !verdict.IsMismatch(err) {
		t.Fatalf("Check = %v, want a mismatch (web-starting's digest is not observed)", err)
	}
	if len(r.Groups) != 2 || r.Groups[0].Count != 7 || !r.Groups[0].Match || r.Groups[0].Running != fleettest.Index.String() {
		t.Errorf("groups = %+v, want one matching group of 7 at the index digest", r.Groups)
	}
	if len(r.Divergent) != 1 || r.Divergent[0].Name != "store/web-starting/app" || !strings.Contains(r.Divergent[0].Differences[0].Message, "could not be observed") {
		t.Errorf("divergent = %+v, want web-starting not observed", r.Divergent)
	}
	for _, q := range f.Requests() {
		if q.URL.Query().Get("labelSelector") != "app=web" || q.URL.Query().Get("limit") == "" {
			t.Errorf("request %s: want the selector and a limit", q.URL)
		}
	}
	// Overlapping specs name each container once: the tally counts none twice.
	if both, err := fleet.Discover(ctx, []string{"k8s:store/app=web", "k8s:store", "k8s:store/app=web"}, fleet.DiscoverOptions{Kubernetes: kubeClient(f)}); err != nil || len(both) != 9 {
		t.Errorf("Discover(k8s:store/app=web k8s:store k8s:store/app=web) = %d targets, %v; want 9, each container once", len(both), err)
	}
}

func TestAgentlessKubernetesErrors(t *testing.T) {
	f := kubefake.New(t)
	c := kubeClient(f)
	c.Config.Token = "wrong"
	_, err := fleet.Discover(context.Background(), []string{"k8s:store"}, fleet.DiscoverOptions{Kubernetes: c})
	if !verdict.IsUnavailable(err) || !strings.Contains(err.Error(), "401") {
		t.Errorf("Discover with a wrong token = %v, want unavailable, 401", err)
	}
	var se *fleet.SpecError
	if _, err := fleet.Discover(context.Background(), []string{"k8s:/app=web"}, fleet.DiscoverOptions{Kubernetes: c}); !errors.As(err, &se) {
		t.Errorf("Discover(k8s:/app=web) = %v, want a *SpecError", err)
	}
	if _, err := fleet.Discover(context.Background(), []string{"k8s:store"}, fleet.DiscoverOptions{}); !errors.As(err, &se) {
		t.Errorf("Discover without a client = %v, want a *SpecError", err)
	}
}

// TestMixedAgentAndAgentless: agents, ECS and Kubernetes in one check;
// every format renders the agentless groups as such.
func TestMixedAgentAndAgentless(t *testing.T) {
	aws := awsfake.NewAWS(t)
	aws.ECSServices = map[string][]awsfake.ECSTask{"prod/web": ecsService(2, func(int) string { return fleettest.Amd64.String() })}
	kf := kubefake.New(t)
	kf.Pods = namespacePods(3, func(int) string { return fleettest.Amd64Cfg.String() })
	var specs []string
	for _, id := range []string{"i-01", "i-02"} {
		specs = append(specs, agenttest.Serve(t, agenttest.Good(id), agent.ServeOptions{}))
	}
	specs = append(specs, "ecs:prod/web", "k8s:store")
	ctx := context.Background()
	targets, err := fleet.Discover(ctx, specs, fleet.DiscoverOptions{ECS: ecsClient(aws), Kubernetes: kubeClient(kf)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := fleet.Check(ctx, fleettest.Signed(t, 7), targets, fleet.Options{})
	if err != nil {
		t.Fatalf("Check = %v, want a match", err)
	}
	if s := r.Summary; s.Instances != 7 || s.Match != 7 || s.Agentless != 5 {
		t.Errorf("summary = %+v, want 7 matching, 5 agentless", s)
	}
	if len(r.Groups) != 2 || r.Groups[0].Count != 5 || !r.Groups[0].Agentless || r.Groups[1].Count != 2 || r.Groups[1].Agentless {
		t.Errorf("groups = %+v, want 5 agentless and 2 agents", r.Groups)
	}
	if len(r.InUse) != 1 || r.InUse[0].Instances != 7 {
		t.Errorf("inUse = %+v, want the release's manifest for all 7", r.InUse)
	}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"text":     func(b *bytes.Buffer) error { return r.WriteText(b) },
		"markdown": func(b *bytes.Buffer) error { return r.WriteMarkdown(b) },
		"json":     func(b *bytes.Buffer) error { return r.WriteJSON(b) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"text": "assets not visible (agentless)", "markdown": "not visible (agentless)", "json": `"agentless": true`}[name]
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s report lacks %q:\n%s", name, want, b.String())
		}
	}
	var b bytes.Buffer
	if err := r.WriteSARIF(&b); err != nil || !strings.Contains(b.String(), `"results": []`) && !strings.Contains(b.String(), `"results":[]`) {
		t.Errorf("SARIF = %v, want no results:\n%s", err, b.String())
	}
}

// TestGroupByReleaseIdentity: agents whose runtimes report the index, the
// manifest and the config digest of one image are one matching group,
// named by the index digest; a re-pushed digest stays a group of its own.
func TestGroupByReleaseIdentity(t *testing.T) {
	var specs []string
	for i, d := range []manifest.Digest{fleettest.Index, fleettest.Amd64, fleettest.Amd64Cfg, fleettest.Repushed} {
		in := agenttest.Good(fmt.Sprintf("i-%02d", i))
		in.Running = d
		specs = append(specs, agenttest.Serve(t, in, agent.ServeOptions{}))
	}
	targets, err := fleet.Discover(context.Background(), specs, fleet.DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := fleet.Check(context.Background(), fleettest.Signed(t, 7), targets, fleet.Options{})
	if len(r.Groups) != 2 || r.Groups[0].Count != 3 || !r.Groups[0].Match || r.Groups[0].Running != fleettest.Index.String() ||
		r.Groups[1].Match || r.Groups[1].Running != fleettest.Repushed.String() {
		t.Errorf("groups = %+v, want 3 matching at the index digest, 1 re-pushed", r.Groups)
	}
	if len(r.InUse) != 1 || len(r.InUse[0].ImageDigests) != 4 {
		t.Errorf("inUse = %+v, want every digest reported kept in use", r.InUse)
	}
}

// BenchmarkAgentlessECS discovers and checks a 5,000-task ECS service
// through the real SDK client and the AWS fake: ListTasks pages of 100 (50
// calls) and DescribeTasks batches of 100 (50 calls).
func BenchmarkAgentlessECS(b *testing.B) {
	const n = 5000
	f := awsfake.NewAWS(b)
	f.ECSServices = map[string][]awsfake.ECSTask{"prod/web": ecsService(n, func(int) string { return fleettest.Amd64.String() })}
	benchAgentless(b, n, "ecs:prod/web", fleet.DiscoverOptions{ECS: ecsClient(f)})
}

// BenchmarkAgentlessKubernetes discovers and checks a 5,000-pod namespace
// through the Kubernetes client and the API fake: pages of 500 (10 calls).
func BenchmarkAgentlessKubernetes(b *testing.B) {
	const n = 5000
	f := kubefake.New(b)
	f.Pods = namespacePods(n, func(int) string { return fleettest.Amd64Cfg.String() })
	benchAgentless(b, n, "k8s:store/app=web", fleet.DiscoverOptions{Kubernetes: kubeClient(f)})
}

func benchAgentless(b *testing.B, n int, spec string, o fleet.DiscoverOptions) {
	m := fleettest.Signed(b, 7)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		targets, err := fleet.Discover(ctx, []string{spec}, o)
		if err != nil {
			b.Fatal(err)
		}
		r, err := fleet.Check(ctx, m, targets, fleet.Options{})
		if err != nil || r.Summary.Match != n || len(r.Groups) != 1 {
			b.Fatalf("Check = %+v, %v", r.Summary, err)
		}
	}
	b.ReportMetric(float64(n), "containers/op")
}

// roleRelease is a release of four images: web (fleettest's index over
// linux/amd64 and linux/arm64), worker (another repository), and api and
// jobs, two roles of one repository told apart by their tags.
func roleRelease(t *testing.T) *manifest.Signed {
	t.Helper()
	m := fleettest.Manifest(7)
	single := func(name, repo, tag string, d, cfg manifest.Digest) manifest.Image {
		return manifest.Image{Name: name, Ref: repo + ":" + tag, Repository: repo, Tag: tag, Digest: d,
			MediaType: "application/vnd.oci.image.manifest.v1+json",
			Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: d, Config: cfg}}}
	}
	m.Images = append(m.Images,
		single("worker", "registry.example/store/worker", "v1", roleDigest("a"), roleDigest("b")),
		single("api", "registry.example/store/app", "api-v1", roleDigest("c"), roleDigest("d")),
		single("jobs", "registry.example/store/app", "jobs-v1", roleDigest("e"), roleDigest("f")))
	return fleettest.SignedOf(t, m)
}

func roleDigest(c string) manifest.Digest {
	return manifest.MustParseDigest("sha256:" + strings.Repeat(c, 64))
}

// TestAgentlessJudgesByRole: each container is judged against the release
// image its spec names (its repository, then its name or tag), on its
// node's platform, never against whichever image of the release has the
// digest it runs: a tag re-pushed with the bytes of another image of the
// same release (the Epic case) is divergent.
func TestAgentlessJudgesByRole(t *testing.T) {
	worker, api, jobs := roleDigest("a"), roleDigest("c"), roleDigest("e")
	tests := []struct {
		name, container, image, node string
		running                      manifest.Digest
		match                        bool
	}{
		{"web on its own index, amd64 node", "web", webRef, "amd64", fleettest.Index, true},
		{"web's amd64 manifest on an amd64 node", "web", webRef, "amd64", fleettest.Amd64, true},
		{"web's arm64 config on an arm64 node", "web", webRef, "arm64", fleettest.Arm64Cfg, true},
		{"Epic: web's tag re-pushed with worker's bytes", "web", webRef, "amd64", worker, false},
		{"Epic: worker's tag re-pushed with web's index", "worker", "registry.example/store/worker:v1", "amd64", fleettest.Index, false},
		{"web's arm64 manifest on an amd64 node", "web", webRef, "amd64", fleettest.Arm64, false},
		{"web's index on a node of a platform it lacks", "web", webRef, "s390x", fleettest.Index, false},
		{"web's index on a node the API does not know", "web", webRef, "gone", fleettest.Index, true},
		{"api by its name, running api", "api", "registry.example/store/app:api-v1", "amd64", api, true},
		{"api by its name, running jobs' bytes", "api", "registry.example/store/app:api-v1", "amd64", jobs, false},
		{"a sidecar name, api by its tag, running jobs' bytes", "proxy", "registry.example/store/app:api-v1", "amd64", jobs, false},
		{"a sidecar name, api by its tag, running api", "proxy", "registry.example/store/app:api-v1", "amd64", api, true},
		{"a shared repository by digest alone names no role", "proxy", "registry.example/store/app@" + api.String(), "amd64", api, false},
		{"the repository spelled another way", "web", "REGISTRY.example.:443/store/web:v1", "amd64", fleettest.Amd64Cfg, true},
		{"a repository the release does not have, running web's index", "web", "registry.example/store/other:v1", "amd64", fleettest.Index, false},
	}
	f := kubefake.New(t)
	f.Nodes = []corev1.Node{kubefake.Node("amd64", "linux", "amd64"), kubefake.Node("arm64", "linux", "arm64"), kubefake.Node("s390x", "linux", "s390x")}
	for i, tt := range tests {
		p := kubefake.Pod("store", fmt.Sprintf("p%02d", i), nil, tt.image, "docker-pullable://x@"+tt.running.String())
		p.Spec.NodeName = tt.node
		p.Spec.Containers[0].Name, p.Status.ContainerStatuses[0].Name = tt.container, tt.container
		f.Pods = append(f.Pods, p)
	}
	ctx := context.Background()
	targets, err := fleet.Discover(ctx, []string{"k8s:store"}, fleet.DiscoverOptions{Kubernetes: kubeClient(f)})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := fleet.Check(ctx, roleRelease(t), targets, fleet.Options{})
	divergent := map[string]fleet.Instance{}
	for _, in := range r.Divergent {
		divergent[in.Name] = in
	}
	for i, tt := range tests {
		name := fmt.Sprintf("store/p%02d/%s", i, tt.container)
		in, bad := divergent[name]
		if bad == tt.match {
			t.Errorf("%s: divergent = %v (%+v), want %v", tt.name, bad, in.Differences, !tt.match)
		}
		if bad && (len(in.Differences) != 1 || in.Differences[0].Kind != fleet.DiffImage) {
			t.Errorf("%s: differences = %+v, want one image difference", tt.name, in.Differences)
		}
	}
	gets := 0
	for _, q := range f.Requests() {
		if strings.HasPrefix(q.URL.Path, "/api/v1/nodes/") {
			gets++
		}
	}
	if gets != 4 {
		t.Errorf("node GETs = %d, want 4 (each node once)", gets)
	}

	// A Role that grants pods only: the platform is not known, and an index
	// digest is judged on every platform it holds.
	f.ForbidNodes = true
	targets, err = fleet.Discover(ctx, []string{"k8s:store"}, fleet.DiscoverOptions{Kubernetes: kubeClient(f)})
	if err != nil {
		t.Fatalf("Discover with nodes forbidden = %v, want the pods without platforms", err)
	}
	for _, tg := range targets {
		if tg.Observed.Platform != "" {
			t.Errorf("%s: platform %q with nodes forbidden", tg.Observed.Name, tg.Observed.Platform)
		}
	}
}

// TestAgentlessECSPlatform: a task's platform is its cpu-architecture
// attribute on its platform family's OS, and a container is judged on it.
func TestAgentlessECSPlatform(t *testing.T) {
	f := awsfake.NewAWS(t)
	task := func(id, arch, family string, d manifest.Digest) awsfake.ECSTask {
		return awsfake.ECSTask{ARN: "arn:aws:ecs:us-east-1:123456789012:task/prod/" + id, CPUArchitecture: arch, PlatformFamily: family,
			Containers: []awsfake.ECSContainer{{Name: "web", Image: webRef, ImageDigest: d.String()}}}
	}
	f.ECSServices = map[string][]awsfake.ECSTask{"prod/web": {
		task("fargate", "arm64", "Linux", fleettest.Arm64Cfg),
		task("windows", "x86_64", "WINDOWS_SERVER_2022_CORE", fleettest.Index),
		task("unknown", "", "", fleettest.Index),
		task("elsewhere", "arm64", "", fleettest.Amd64),
	}}
	ctx := context.Background()
	targets, err := fleet.Discover(ctx, []string{"ecs:prod/web"}, fleet.DiscoverOptions{ECS: ecsClient(f)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"fargate/web": "linux/arm64", "windows/web": "windows/amd64", "unknown/web": "", "elsewhere/web": "linux/arm64"}
	for _, tg := range targets {
		if got := tg.Observed.Platform; got != want[tg.Observed.Name] {
			t.Errorf("%s: platform %q, want %q", tg.Observed.Name, got, want[tg.Observed.Name])
		}
	}
	r, _ := fleet.Check(ctx, fleettest.Signed(t, 7), targets, fleet.Options{})
	var divergent []string
	for _, in := range r.Divergent {
		divergent = append(divergent, in.Name)
	}
	// The index holds no windows/amd64; the amd64 manifest is not arm64's.
	if strings.Join(divergent, " ") != "windows/web elsewhere/web" {
		t.Errorf("divergent = %q, want the windows task and the amd64 manifest on arm64", divergent)
	}
}

// TestAgentlessKubernetesEmptySpec (issue 37): the API server lists no
// pods, not an error, for a namespace that does not exist, so a misspelt
// namespace finds nothing. Alone it is "no instances to check" naming the
// spec (exit 3); beside a spec that finds pods the check goes on and the
// log names the spec that found none.
func TestAgentlessKubernetesEmptySpec(t *testing.T) {
	f := kubefake.New(t)
	f.Pods = namespacePods(2, func(int) string { return fleettest.Index.String() })
	ctx := context.Background()
	r, err := fleet.Run(ctx, fleettest.Signed(t, 7), fleet.RunOptions{Specs: []string{"k8s:no-such-namespace", "k8s:store/app=nothing"},
		Discover: fleet.DiscoverOptions{Kubernetes: kubeClient(f)}})
	if !verdict.IsUnavailable(err) || r == nil || r.Summary.Instances != 0 ||
		!strings.Contains(err.Error(), "no instances to check: k8s:no-such-namespace, k8s:store/app=nothing found none (a namespace that does not exist lists no pods") {
		t.Errorf("Run = %v, %v; want a report of no instances and an unavailable error naming both specs", r, err)
	}
	var log bytes.Buffer
	r, err = fleet.Run(ctx, fleettest.Signed(t, 7), fleet.RunOptions{Specs: []string{"k8s:store", "k8s:no-such-namespace"},
		Discover: fleet.DiscoverOptions{Kubernetes: kubeClient(f)}, Check: fleet.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))}})
	if err != nil || r.Summary.Instances != 2 {
		t.Errorf("Run = %v, %v; want the 2 pods of store checked", r, err)
	}
	if !strings.Contains(log.String(), `level=WARN msg="a target found no instances" targets=k8s:no-such-namespace`) {
		t.Errorf("log:\n%s\nwant a warning naming k8s:no-such-namespace", log.String())
	}
}
