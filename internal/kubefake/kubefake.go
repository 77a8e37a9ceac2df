// Package kubefake is a Kubernetes API fake for tests: it serves a
// namespace's pods as the API server does (GET
// /api/v1/namespaces/NS/pods, JSON, equality label selectors, limit and
// continue paging), on loopback, requiring a bearer token.
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

// parseSelector understands equality selectors (k=v, k==v, k!=v, joined
// by commas), which is what the fleet check passes through.
func parseSelector(s string) (func(map[string]string) bool, error) {
	type term struct {
		key, value string
		not        bool
	}
	var terms []term
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		not := strings.Contains(t, "!=")
		k, v, ok := strings.Cut(strings.Replace(strings.Replace(t, "!=", "=", 1), "==", "=", 1), "=")
		if !ok || k == "" {
			return nil, &selectorError{t}
		}
		terms = append(terms, term{k, v, not})
	}
	return func(labels map[string]string) bool {
		for _, t := range terms {
			if (labels[t.key] == t.value) == t.not {
				return false
			}
		}
		return true
	}, nil
}

type selectorError struct{ term string }

func (e *selectorError) Error() string { return "unable to parse requirement: " + e.term }

func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": msg, "reason": reason, "code": code})
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
