// Package kubefake is a Kubernetes API fake for tests: it serves a
// namespace's pods as the API server does (GET
// /api/v1/namespaces/NS/pods, JSON, equality and set-based label
// selectors, limit and continue paging) and nodes (GET /api/v1/nodes/NAME),
// on loopback, requiring a bearer token.
package kubefake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Token is the bearer token the fake accepts.
const Token = "kubefake-token"

// API is the fake API server. Set Pods before serving; it is safe for
// concurrent requests.
type API struct {
	// Pods are the cluster's pods, in list order.
	Pods []corev1.Pod
	// Nodes are the cluster's nodes.
	Nodes []corev1.Node
	// ForbidNodes answers 403 to a node's GET, as to a service account
	// whose Role grants pods only.
	ForbidNodes bool
	// URL is the server's base URL.
	URL string

	mu       sync.Mutex
	requests []*http.Request
	srv      *httptest.Server
}

// New starts a fake on loopback for the life of the test.
func New(t testing.TB) *API {
	t.Helper()
	f := &API{}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	return f
}

// Requests returns the requests received so far.
func (f *API) Requests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.requests...)
}

func (f *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r)
	f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+Token {
		status(w, http.StatusUnauthorized, "Unauthorized", "Unauthorized")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method == http.MethodGet && len(parts) == 4 && parts[0] == "api" && parts[1] == "v1" && parts[2] == "nodes" {
		f.node(w, parts[3])
		return
	}
	if r.Method != http.MethodGet || len(parts) != 5 || parts[0] != "api" || parts[1] != "v1" || parts[2] != "namespaces" || parts[4] != "pods" {
		status(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
		return
	}
	ns := parts[3]
	sel, err := parseSelector(r.URL.Query().Get("labelSelector"))
	if err != nil {
		status(w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	var match []corev1.Pod
	for _, p := range f.Pods {
		if p.Namespace == ns && sel(p.Labels) {
			match = append(match, p)
		}
	}
	start := 0
	if c := r.URL.Query().Get("continue"); c != "" {
		if start, err = strconv.Atoi(c); err != nil || start < 0 || start > len(match) {
			status(w, http.StatusGone, "Expired", "the provided continue parameter is too old")
			return
		}
	}
	end := len(match)
	if l, _ := strconv.Atoi(r.URL.Query().Get("limit")); l > 0 && start+l < end {
		end = start + l
	}
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: match[start:end]}
	list.ResourceVersion = "1"
	if end < len(match) {
		list.Continue = strconv.Itoa(end)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&list)
}

// parseSelector understands the label selectors of the API server: terms
// joined by commas (but for those inside a set's parentheses), each k=v,
// k==v, k!=v, "k in (a,b)", "k notin (a,b)", k or !k.
func parseSelector(s string) (func(map[string]string) bool, error) {
	var terms []func(map[string]string) bool
	for _, t := range splitTerms(s) {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		m, err := parseTerm(t)
		if err != nil {
			return nil, err
		}
		terms = append(terms, m)
	}
	return func(labels map[string]string) bool {
		for _, m := range terms {
			if !m(labels) {
				return false
			}
		}
		return true
	}, nil
}

// splitTerms splits a selector at the commas outside parentheses.
func splitTerms(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func parseTerm(t string) (func(map[string]string) bool, error) {
	for _, op := range []string{" notin ", " in "} {
		k, set, ok := strings.Cut(t, op)
		if !ok {
			continue
		}
		k, set = strings.TrimSpace(k), strings.TrimSpace(set)
		if k == "" || !strings.HasPrefix(set, "(") || !strings.HasSuffix(set, ")") {
			return nil, &selectorError{t}
		}
		values := map[string]bool{}
		for _, v := range strings.Split(set[1:len(set)-1], ",") {
			values[strings.TrimSpace(v)] = true
		}
		in := op == " in "
		return func(l map[string]string) bool {
			v, has := l[k]
			if in {
				return has && values[v]
			}
			return !has || !values[v]
		}, nil
	}
	if strings.HasPrefix(t, "!") {
		k := strings.TrimSpace(t[1:])
		return func(l map[string]string) bool { _, has := l[k]; return !has }, nil
	}
	not := strings.Contains(t, "!=")
	k, v, ok := strings.Cut(strings.Replace(strings.Replace(t, "!=", "=", 1), "==", "=", 1), "=")
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !ok {
		if strings.ContainsAny(t, " ()") || t == "" {
			return nil, &selectorError{t}
		}
		return func(l map[string]string) bool { _, has := l[t]; return has }, nil
	}
	if k == "" || strings.ContainsAny(k+v, " ()") {
		return nil, &selectorError{t}
	}
	return func(l map[string]string) bool { return (l[k] == v) != not }, nil
}

type selectorError struct{ term string }

func (e *selectorError) Error() string { return "unable to parse requirement: " + e.term }

func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": msg, "reason": reason, "code": code})
}

func (f *API) node(w http.ResponseWriter, name string) {
	if f.ForbidNodes {
		status(w, http.StatusForbidden, "Forbidden", `nodes "`+name+`" is forbidden: cannot get resource "nodes"`)
		return
	}
	for _, n := range f.Nodes {
		if n.Name == name {
			w.Header().Set("Content-Type", "application/json")
			n.Kind, n.APIVersion = "Node", "v1"
			_ = json.NewEncoder(w).Encode(&n)
			return
		}
	}
	status(w, http.StatusNotFound, "NotFound", `nodes "`+name+`" not found`)
}

// Node is a node of platform os/arch, as the kubelet reports it.
func Node(name, os, arch string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{OperatingSystem: os, Architecture: arch}}}
}

// Pod is a running pod of one container with the given image and imageID.
func Pod(namespace, name string, labels map[string]string, image, imageID string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", Image: image, ImageID: imageID, Ready: true},
		}},
	}
}
