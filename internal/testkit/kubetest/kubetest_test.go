package kubetest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/kubetest"
	"github.com/lockstep-dev/lockstep/verify/fleet/kube"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Run(m)) }

// TestCluster: the shared control plane answers its admin, refuses the
// user without a RoleBinding and admits it with one, makes namespaces
// that take pods (their default ServiceAccount is there), writes a
// kubeconfig that verify/fleet/kube reads, and audits pod requests.
func TestCluster(t *testing.T) {
	c := kubetest.Shared(t)
	if again := kubetest.Shared(t); again != c {
		t.Fatal("a second Shared started another control plane")
	}
	c.Namespace(t, "kubetest", map[string]string{"team": "a"})
	var ns struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	c.Must(t, http.StatusOK, kubetest.Request{Method: "GET", Path: "/api/v1/namespaces/kubetest"}).Decode(t, &ns)
	if ns.Metadata.Labels["team"] != "a" || ns.Metadata.Labels["kubernetes.io/metadata.name"] != "kubetest" {
		t.Errorf("namespace labels %v", ns.Metadata.Labels)
	}
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"registry.test/web:v1"}]}}`
	created := c.Must(t, http.StatusCreated, kubetest.Request{Method: "POST", Path: "/api/v1/namespaces/kubetest/pods", Body: pod})

	list := kubetest.Request{Method: "GET", Path: "/api/v1/namespaces/kubetest/pods", Token: c.UserToken}
	if r := c.Do(t, list); r.Code != http.StatusForbidden {
		t.Errorf("the user without a RoleBinding listed pods: HTTP %d %s", r.Code, r.Body)
	}
	c.Must(t, http.StatusCreated, kubetest.Request{Method: "POST", Path: "/apis/rbac.authorization.k8s.io/v1/namespaces/kubetest/roles",
		Body: `{"metadata":{"name":"read"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["list"]}]}`})
	c.Must(t, http.StatusCreated, kubetest.Request{Method: "POST", Path: "/apis/rbac.authorization.k8s.io/v1/namespaces/kubetest/rolebindings",
		Body: `{"metadata":{"name":"read"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"read"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"` + kubetest.User + `"}]}`})

	cfg, err := kube.Load(c.Kubeconfig(t, c.UserToken))
	if err != nil {
		t.Fatal(err)
	}
	kc := &kube.Client{Config: cfg, HTTP: &http.Client{Transport: &http.Transport{TLSClientConfig: cfg.TLS}}}
	pods, err := kc.ListPods(context.Background(), "kubetest", "", 0, "")
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Name != "p" {
		t.Fatalf("ListPods as the user with the Role: %v, %v", pods, err)
	}

	// The create is in the audit log under the Audit-Id the API server
	// answered with.
	id := created.Header.Get("Audit-Id")
	f, err := os.Open(c.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	found := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var ev struct {
			AuditID string `json:"auditID"`
			Verb    string `json:"verb"`
			User    struct {
				Username string `json:"username"`
			} `json:"user"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.AuditID == id && ev.Verb == "create" && ev.User.Username == kubetest.AdminUser {
			found = true
		}
	}
	if id == "" || !found {
		t.Errorf("no audit event for the pod's create (Audit-Id %q) in %s", id, c.AuditLog)
	}
}
