package kubetest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Request is one call to the API server.
type Request struct {
	Method, Path string
	// Body is sent as is when it is []byte or string, else as its JSON
	// encoding; nil sends none.
	Body any
	// ContentType defaults to application/json, and to
	// application/merge-patch+json for a PATCH.
	ContentType string
	// Token authenticates the call; "" is AdminToken.
	Token string
}

// Response is the API server's answer.
type Response struct {
	// Code is the HTTP status, 0 when no answer came (the test is then
	// marked failed).
	Code   int
	Header http.Header
	Body   []byte
}

// Message is the message of a Status answer (a refusal), "" otherwise.
func (r *Response) Message() string {
	var st struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}
	if json.Unmarshal(r.Body, &st) != nil || st.Kind != "Status" {
		return ""
	}
	return st.Message
}

// Warnings are the Warning headers' texts (RFC 7234's "299 - "text""), in
// order.
func (r *Response) Warnings() []string {
	var out []string
	for _, h := range r.Header.Values("Warning") {
		text, ok := strings.CutPrefix(h, "299 - ")
		if u, err := strconv.Unquote(text); ok && err == nil {
			text = u
		}
		out = append(out, text)
	}
	return out
}

// Decode decodes the body into v, failing the test when it cannot.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decoding the answer (HTTP %d): %v\n%s", r.Code, err, r.Body)
	}
}

// Do sends r. It is safe to call from several goroutines; a call that gets
// no answer marks the test failed (t.Errorf) and returns Code 0.
func (c *Cluster) Do(t testing.TB, r Request) *Response {
	t.Helper()
	var body io.Reader
	switch b := r.Body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	case string:
		body = bytes.NewReader([]byte(b))
	default:
		js, err := json.Marshal(b)
		if err != nil {
			t.Errorf("%s %s: encoding the body: %v", r.Method, r.Path, err)
			return &Response{Header: http.Header{}}
		}
		body = bytes.NewReader(js)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.Method, c.URL+r.Path, body)
	if err != nil {
		t.Errorf("%s %s: %v", r.Method, r.Path, err)
		return &Response{Header: http.Header{}}
	}
	token := r.Token
	if token == "" {
		token = c.AdminToken
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		ct := r.ContentType
		if ct == "" {
			ct = "application/json"
			if r.Method == http.MethodPatch {
				ct = "application/merge-patch+json"
			}
		}
		req.Header.Set("Content-Type", ct)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", r.Method, r.Path, err)
		return &Response{Header: http.Header{}}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("%s %s: reading the answer: %v", r.Method, r.Path, err)
	}
	return &Response{Code: resp.StatusCode, Header: resp.Header, Body: b}
}

// Must is Do that fails the test now unless the answer's status is want.
func (c *Cluster) Must(t testing.TB, want int, r Request) *Response {
	t.Helper()
	resp := c.Do(t, r)
	if resp.Code != want {
		t.Fatalf("%s %s: HTTP %d, want %d: %s", r.Method, r.Path, resp.Code, want, bodyText(resp))
	}
	return resp
}

func bodyText(r *Response) string {
	if m := r.Message(); m != "" {
		return m
	}
	return string(r.Body)
}

// Namespace creates a namespace with labels and its "default"
// ServiceAccount (no controller-manager makes it).
func (c *Cluster) Namespace(t testing.TB, name string, labels map[string]string) {
	t.Helper()
	ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name, "labels": labels}}
	c.Must(t, http.StatusCreated, Request{Method: http.MethodPost, Path: "/api/v1/namespaces", Body: ns})
	sa := map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "default"}}
	c.Must(t, http.StatusCreated, Request{Method: http.MethodPost, Path: "/api/v1/namespaces/" + name + "/serviceaccounts", Body: sa})
}

// Kubeconfig writes a kubeconfig for the API server (its CA inline) and
// the bearer token, in namespace "default", and returns its path.
func (c *Cluster) Kubeconfig(t testing.TB, token string) string {
	t.Helper()
	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubetest
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: user
  user:
    token: %s
contexts:
- name: kubetest
  context: {cluster: kubetest, user: user, namespace: default}
current-context: kubetest
`, c.URL, base64.StdEncoding.EncodeToString(ca), token)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
