package awsfake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Token is the session token the IMDS fake hands out.
const Token = "AQAEAFakeTokenFakeTokenFakeToken=="

// IMDS is an IMDSv2 fake: PUT /latest/api/token hands out Token, and
// GET /latest/meta-data/PATH answers Values[PATH] to requests that carry
// it (404 for a path it does not have, 401 without the token). The
// instance identity document (/latest/dynamic/instance-identity/document,
// where the SDK reads the region) is built from Values' instance-id,
// placement/availability-zone, placement/region and local-ipv4.
type IMDS struct {
	Values map[string]string
	// URL is the endpoint NewIMDS started.
	URL string

	mu     sync.Mutex
	tokens int
	gets   []string
	srv    *httptest.Server
}

// NewIMDS starts a fake on loopback for the life of the test, for an
// instance of that ID in that region.
func NewIMDS(t testing.TB, instanceID, region string) *IMDS {
	t.Helper()
	f := &IMDS{Values: map[string]string{"instance-id": instanceID, "placement/region": region}}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	return f
}

// Close stops the service NewIMDS started.
func (f *IMDS) Close() { f.srv.Close() }

// Gets returns the paths read with a valid token, and how many tokens
// were issued.
func (f *IMDS) Gets() (paths []string, tokens int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.gets...), f.tokens
}

func (f *IMDS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPut:
		if r.URL.Path != "/latest/api/token" {
			http.NotFound(w, r)
			return
		}
		ttl := r.Header.Get("X-aws-ec2-metadata-token-ttl-seconds")
		if ttl == "" {
			http.Error(w, "missing TTL", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.tokens++
		f.mu.Unlock()
		w.Header().Set("X-aws-ec2-metadata-token-ttl-seconds", ttl)
		w.Write([]byte(Token))
	case http.MethodGet:
		if r.Header.Get("X-aws-ec2-metadata-token") != Token {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		f.mu.Lock()
		f.gets = append(f.gets, r.URL.Path)
		f.mu.Unlock()
		f.get(w, r)
	default:
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

func (f *IMDS) get(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/latest/dynamic/instance-identity/document" {
		if f.Values["placement/region"] == "" {
			http.NotFound(w, r)
			return
		}
		doc, _ := json.Marshal(map[string]string{
			"instanceId": f.Values["instance-id"], "availabilityZone": f.Values["placement/availability-zone"],
			"region": f.Values["placement/region"], "privateIp": f.Values["local-ipv4"], "accountId": "123456789012",
		})
		w.Header().Set("Content-Type", "text/plain")
		w.Write(doc)
		return
	}
	p, ok := strings.CutPrefix(r.URL.Path, "/latest/meta-data/")
	v, has := f.Values[p]
	if !ok || !has {
		http.NotFound(w, r)
		return
	}
	w.Write([]byte(v))
}
