package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/kubetest"
)

// fleetReport is what the tests read of `fleet check --format json`.
type fleetReport struct {
	Summary struct {
		Result      string `json:"result"`
		Instances   int    `json:"instances"`
		Match       int    `json:"match"`
		Divergent   int    `json:"divergent"`
		Unreachable int    `json:"unreachable"`
		Agentless   int    `json:"agentless"`
	} `json:"summary"`
	Divergent []struct {
		Name string `json:"name"`
	} `json:"divergent"`
}

// divergentNames are the report's divergent instances, sorted.
func (f *fleetReport) divergentNames() []string {
	var out []string
	for _, d := range f.Divergent {
		out = append(out, d.Name)
	}
	sort.Strings(out)
	return out
}

// runningPod creates a Pod in namespace with labels and one container
// "web" of image, on node (none when ""), and writes its status as a
// kubelet would, through pods/status: Running, the container's imageID as
// given ("" leaves the container waiting, not started).
func runningPod(t testing.TB, c *kubetest.Cluster, namespace, name string, labels map[string]string, node, image, imageID string) {
	t.Helper()
	spec := map[string]any{"containers": []any{map[string]any{"name": "web", "image": image}}}
	if node != "" {
		spec["nodeName"] = node
	}
	p := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name, "labels": labels}, "spec": spec}
	path := "/api/v1/namespaces/" + namespace + "/pods"
	if r := c.Do(t, kubetest.Request{Method: "POST", Path: path, Body: p}); r.Code != http.StatusCreated {
		t.Errorf("creating pod %s/%s: HTTP %d %s", namespace, name, r.Code, r.Body)
		return
	}
	cs := map[string]any{"name": "web", "image": image, "imageID": imageID, "ready": true, "restartCount": 0,
		"started": true, "state": map[string]any{"running": map[string]any{"startedAt": "2026-12-06T00:00:00Z"}}}
	if imageID == "" {
		cs = map[string]any{"name": "web", "image": image, "imageID": "", "ready": false, "restartCount": 0,
			"state": map[string]any{"waiting": map[string]any{"reason": "ContainerCreating"}}}
	}
	st := map[string]any{"status": map[string]any{"phase": "Running", "containerStatuses": []any{cs}}}
	if r := c.Do(t, kubetest.Request{Method: "PATCH", Path: path + "/" + name + "/status", Body: st}); r.Code != http.StatusOK {
		t.Errorf("writing the status of pod %s/%s: HTTP %d %s", namespace, name, r.Code, r.Body)
	}
}

// fleetCheck runs `lockstep fleet check` of the release against target
// with kubeconfig, as JSON, and returns its exit code, report and stderr.
func fleetCheck(t *testing.T, r *release, kubeconfig, target string) (int, *fleetReport, string) {
	t.Helper()
	code, out, errOut := lockstep(context.Background(), "fleet", "check", "--manifest", r.Manifest, "--release", "store-web", "--key", r.Key,
		"--kubeconfig", kubeconfig, "--targets", target, "--format", "json")
	var rep fleetReport
	if out != "" {
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Errorf("%s: the report is not JSON: %v\n%s", target, err, out)
		}
	}
	return code, &rep, errOut
}

// documentedRole is docs/fleet.md's Role and RoleBinding for `fleet check
// --targets k8s:`, as a user copies them: their namespace and the
// binding's ServiceAccount's changed to the test's, nothing else.
func documentedRole(t *testing.T, namespace, saNamespace string) (role, binding map[string]any) {
	t.Helper()
	doc, err := os.ReadFile("../../docs/fleet.md")
	if err != nil {
		t.Fatal(err)
	}
	var found []map[string]any
	for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1) {
		// The block is indented with its list item: dedent it.
		text := regexp.MustCompile(`(?m)^  `).ReplaceAllString(string(block[1]), "")
		for _, part := range strings.Split(text, "\n---\n") {
			if !strings.Contains(part, "kind: Role\n") && !strings.Contains(part, "kind: RoleBinding\n") {
				continue
			}
			part = strings.ReplaceAll(part, "namespace: store}", "namespace: "+namespace+"}")
			part = strings.ReplaceAll(part, "namespace: ci}", "namespace: "+saNamespace+"}")
			found = append(found, yamlObject(t, part))
		}
	}
	if len(found) != 2 || found[0]["kind"] != "Role" || found[1]["kind"] != "RoleBinding" {
		t.Fatalf("docs/fleet.md: want one Role and one RoleBinding, found %v", found)
	}
	return found[0], found[1]
}

// TestFleetEndToEnd: `lockstep fleet check --targets k8s:` against a real
// API server. Pods get their status the way a kubelet writes it (through
// pods/status), with every imageID form runtimes report; the check reads
// them with the documented Role only (none is exit 3), with label
// selectors holding commas, a namespace that does not exist, and 501 pods
// (the API server's pages of 500, and continue).
func TestFleetEndToEnd(t *testing.T) {
	c := kubetest.Shared(t)
	r := newRelease(t)
	amd64, arm64 := r.Image.Platforms[0], r.Image.Platforms[1]
	if amd64.String() != "linux/amd64" || arm64.String() != "linux/arm64" {
		t.Fatalf("platforms %v", r.Image.Platforms)
	}
	tag := r.Repo + ":v1"
	c.Namespace(t, "fleet", nil)
	c.Namespace(t, "ci", nil)
	web := func(tier string) map[string]string { return map[string]string{"app": "web", "tier": tier} }
	for _, p := range []struct {
		name    string
		labels  map[string]string
		node    string
		imageID string
	}{
		{"web-pullable", web("main"), "node-1", "docker-pullable://" + r.Repo + "@" + r.Digest()}, // dockershim, cri-dockerd
		{"web-dockerid", web("main"), "", "docker://" + amd64.Config.String()},                    // dockershim's image ID: the config
		{"web-platform", web("main"), "", r.Repo + "@" + arm64.Digest.String()},                   // CRI-O, containerd: repo@digest
		{"api-config", map[string]string{"app": "api"}, "", arm64.Config.String()},                // containerd, kubernetes#115199
		{"web-canary", web("canary"), "", r.Repo + "@" + r.Other},                                 // another digest: divergent
		{"batch", map[string]string{"app": "batch"}, "", "docker-pullable://" + r.Repo + "@" + r.Other},
	} {
		runningPod(t, c, "fleet", p.name, p.labels, p.node, tag, p.imageID)
	}
	// A pod that is not Running is no instance.
	c.Must(t, http.StatusCreated, kubetest.Request{Method: "POST", Path: "/api/v1/namespaces/fleet/pods", Body: pod("pending", tag, nil)})

	// The fleet check's identity: a ServiceAccount, with a token from the
	// TokenRequest API, bound to nothing yet.
	c.Must(t, http.StatusCreated, kubetest.Request{Method: "POST", Path: "/api/v1/namespaces/ci/serviceaccounts", Body: `{"metadata":{"name":"lockstep"}}`})
	var tr struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	c.Must(t, http.StatusCreated, kubetest.Request{Method: "POST", Path: "/api/v1/namespaces/ci/serviceaccounts/lockstep/token",
		Body: `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}`}).Decode(t, &tr)
	sa := c.Kubeconfig(t, tr.Status.Token)

	code, _, errOut := fleetCheck(t, r, sa, "k8s:fleet")
	if code != 3 || !strings.Contains(errOut, "forbidden") || !strings.Contains(errOut, "fleet") {
		t.Errorf("no Role: exit %d, want 3 (could not verify) saying forbidden:\n%s", code, errOut)
	}
	role, binding := documentedRole(t, "fleet", "ci")
	c.Must(t, http.StatusCreated, kubetest.Request{Method: "POST", Path: "/apis/rbac.authorization.k8s.io/v1/namespaces/fleet/roles", Body: role})
	c.Must(t, http.StatusCreated, kubetest.Request{Method: "POST", Path: "/apis/rbac.authorization.k8s.io/v1/namespaces/fleet/rolebindings", Body: binding})

	for _, tc := range []struct {
		target    string
		code      int
		match     int
		divergent []string
	}{
		{"k8s:fleet/app=web,tier!=canary", 0, 3, nil},
		{"k8s:fleet/app in (web,api),tier notin (canary)", 0, 4, nil},
		{"k8s:fleet/app in (web,api)", 1, 4, []string{"fleet/web-canary/web"}},
		{"k8s:fleet/app", 1, 4, []string{"fleet/batch/web", "fleet/web-canary/web"}},
		{"k8s:fleet", 1, 4, []string{"fleet/batch/web", "fleet/web-canary/web"}},
	} {
		code, rep, errOut := fleetCheck(t, r, sa, tc.target)
		if code != tc.code || rep.Summary.Match != tc.match || fmt.Sprint(rep.divergentNames()) != fmt.Sprint(tc.divergent) ||
			rep.Summary.Instances != tc.match+len(tc.divergent) || rep.Summary.Agentless != rep.Summary.Instances {
			t.Errorf("%s with the documented Role: exit %d, %+v, divergent %v; want exit %d, %d matching, divergent %v\n%s",
				tc.target, code, rep.Summary, rep.divergentNames(), tc.code, tc.match, tc.divergent, errOut)
		}
	}
	// The Role is of one namespace: another is refused, and a namespace
	// that does not exist is named.
	c.Namespace(t, "other", nil)
	if code, _, errOut := fleetCheck(t, r, sa, "k8s:other"); code != 3 || !strings.Contains(errOut, "forbidden") {
		t.Errorf("a namespace the Role does not cover: exit %d, want 3 saying forbidden\n%s", code, errOut)
	}
	admin := c.Kubeconfig(t, c.AdminToken)
	if code, _, errOut := fleetCheck(t, r, admin, "k8s:no-such-namespace"); code == 0 || !strings.Contains(errOut, "no-such-namespace") {
		t.Errorf("a namespace that does not exist: exit %d, want a failure naming it\n%s", code, errOut)
	}
}

// TestFleetNodePlatform: with RBAC to get nodes, a pod is judged on its
// node's platform as the API server reports it (status.nodeInfo): on an
// arm64 node, the arm64 image's config digest and the index digest match,
// the amd64 image's config or manifest digest (another platform's bytes)
// is divergent.
func TestFleetNodePlatform(t *testing.T) {
	c := kubetest.Shared(t)
	r := newRelease(t)
	amd64, arm64 := r.Image.Platforms[0], r.Image.Platforms[1]
	c.Must(t, http.StatusCreated, kubetest.Request{Method: "POST", Path: "/api/v1/nodes", Body: `{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-arm"}}`})
	c.Must(t, http.StatusOK, kubetest.Request{Method: "PATCH", Path: "/api/v1/nodes/node-arm/status",
		Body: `{"status":{"nodeInfo":{"operatingSystem":"linux","architecture":"arm64","machineID":"m","systemUUID":"s","bootID":"b","kernelVersion":"6.1","osImage":"Debian","containerRuntimeVersion":"containerd://1.7","kubeletVersion":"v1.34.4","kubeProxyVersion":""}}}`})
	c.Namespace(t, "nodes", nil)
	for name, imageID := range map[string]string{
		"arm-config":   arm64.Config.String(),
		"arm-index":    "docker-pullable://" + r.Repo + "@" + r.Digest(),
		"cross-config": amd64.Config.String(),
		"cross-digest": r.Repo + "@" + amd64.Digest.String(),
	} {
		runningPod(t, c, "nodes", name, map[string]string{"app": "web"}, "node-arm", r.Repo+":v1", imageID)
	}
	code, rep, errOut := fleetCheck(t, r, c.Kubeconfig(t, c.AdminToken), "k8s:nodes")
	if want := []string{"nodes/cross-config/web", "nodes/cross-digest/web"}; code != 1 || rep.Summary.Match != 2 || fmt.Sprint(rep.divergentNames()) != fmt.Sprint(want) {
		t.Errorf("pods on an arm64 node: exit %d, %+v, divergent %v; want exit 1, 2 matching, divergent %v\n%s", code, rep.Summary, rep.divergentNames(), want, errOut)
	}
}

// TestFleetPaging: 501 running pods in one namespace are read in the API
// server's pages (limit 500, then continue) and every one is counted.
func TestFleetPaging(t *testing.T) {
	c := kubetest.Shared(t)
	r := newRelease(t)
	const n = 501
	c.Namespace(t, "many", nil)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				runningPod(t, c, "many", fmt.Sprintf("p%03d", i), map[string]string{"app": "web"}, "", r.Repo+"@"+r.Digest(), r.Repo+"@"+r.Digest())
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	code, rep, errOut := fleetCheck(t, r, c.Kubeconfig(t, c.AdminToken), "k8s:many")
	if code != 0 || rep.Summary.Instances != n || rep.Summary.Match != n {
		t.Errorf("%d pods: exit %d, %+v; want exit 0, all %d matching\n%s", n, code, rep.Summary, n, errOut)
	}
	// The audit log shows the two pages: limit=500, then continue.
	lists := 0
	b, err := os.ReadFile(c.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var ev struct {
			Stage, Verb, RequestURI string
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Stage == "ResponseComplete" && ev.Verb == "list" &&
			strings.HasPrefix(ev.RequestURI, "/api/v1/namespaces/many/pods?") && strings.Contains(ev.RequestURI, "limit=500") {
			lists++
			if lists == 2 && !strings.Contains(ev.RequestURI, "continue=") {
				t.Errorf("the second page was asked without continue: %s", ev.RequestURI)
			}
		}
	}
	if lists != 2 {
		t.Errorf("%d list requests with limit=500 for %d pods, want 2 pages", lists, n)
	}
}
