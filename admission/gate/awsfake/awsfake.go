// Package awsfake serves, for tests, local endpoints that speak the AWS
// protocols the boot gate uses: Auto Scaling and ELBv2 (the query
// protocol: form-encoded POST, XML answers) and the instance metadata
// service IMDSv2 (a token PUT, then GETs carrying the token). The real SDK
// clients talk to them through their BaseEndpoint setting.
package awsfake

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// Request is one API call the fake received.
type Request struct {
	Action string
	Params url.Values
}

// Get returns a parameter of the call.
func (r Request) Get(k string) string { return r.Params.Get(k) }

// AWS is a fake Auto Scaling and ELBv2 endpoint (one server for both: the
// Action names do not collide).
type AWS struct {
	URL string

	mu       sync.Mutex
	requests []Request
	// active holds the instances with an active lifecycle action.
	active map[string]bool
	// failAfterApply makes the next CompleteLifecycleAction apply, then
	// answer 500, as when a response is lost.
	failAfterApply int
	failAction     map[string]int
	onHeartbeat    func()
	srv            *httptest.Server
}

// NewAWS starts the fake for the life of the test, with a lifecycle action
// active for each instance given.
func NewAWS(t testing.TB, instances ...string) *AWS {
	t.Helper()
	f := &AWS{active: map[string]bool{}, failAction: map[string]int{}}
	for _, i := range instances {
		f.active[i] = true
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	return f
}

// Close stops the endpoint: every later call fails to connect.
func (f *AWS) Close() { f.srv.Close() }

// Requests returns the calls received so far.
func (f *AWS) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// Calls returns the calls of one action.
func (f *AWS) Calls(action string) []Request {
	var out []Request
	for _, r := range f.Requests() {
		if r.Action == action {
			out = append(out, r)
		}
	}
	return out
}

// LoseNextCompletion makes the next CompleteLifecycleAction take effect
// and then answer 500 InternalFailure, so that the client retries.
func (f *AWS) LoseNextCompletion() {
	f.mu.Lock()
	f.failAfterApply++
	f.mu.Unlock()
}

// Fail makes the next n calls of action answer 503 ServiceUnavailable.
func (f *AWS) Fail(action string, n int) {
	f.mu.Lock()
	f.failAction[action] += n
	f.mu.Unlock()
}

// OnHeartbeat sets a function called on each heartbeat received.
func (f *AWS) OnHeartbeat(fn func()) {
	f.mu.Lock()
	f.onHeartbeat = fn
	f.mu.Unlock()
}

// Active reports whether instance still has an active lifecycle action.
func (f *AWS) Active(instance string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.active[instance]
}

const (
	asNS  = "http://autoscaling.amazonaws.com/doc/2011-01-01/"
	elbNS = "http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/"
)

func (f *AWS) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "want POST", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	action := r.PostForm.Get("Action")
	f.mu.Lock()
	f.requests = append(f.requests, Request{Action: action, Params: r.PostForm})
	fail := f.failAction[action] > 0
	if fail {
		f.failAction[action]--
	}
	hb := f.onHeartbeat
	f.mu.Unlock()
	ns := asNS
	if action == "RegisterTargets" {
		ns = elbNS
	}
	if r.Header.Get("Authorization") == "" {
		writeError(w, ns, http.StatusForbidden, "MissingAuthenticationToken", "Request is missing Authentication Token")
		return
	}
	if fail {
		writeError(w, ns, http.StatusServiceUnavailable, "ServiceUnavailable", "Service is unavailable")
		return
	}
	instance := r.PostForm.Get("InstanceId")
	switch action {
	case "CompleteLifecycleAction", "RecordLifecycleActionHeartbeat":
		if r.PostForm.Get("Version") != "2011-01-01" {
			writeError(w, ns, http.StatusBadRequest, "InvalidAction", "unknown version")
			return
		}
		f.mu.Lock()
		active := f.active[instance]
		lose := false
		if action == "CompleteLifecycleAction" && active {
			if res := r.PostForm.Get("LifecycleActionResult"); res != "CONTINUE" && res != "ABANDON" {
				f.mu.Unlock()
				writeError(w, ns, http.StatusBadRequest, "ValidationError", "LifecycleActionResult must be CONTINUE or ABANDON")
				return
			}
			delete(f.active, instance)
			if f.failAfterApply > 0 {
				f.failAfterApply--
				lose = true
			}
		}
		f.mu.Unlock()
		if !active {
			writeError(w, ns, http.StatusBadRequest, "ValidationError", "No active Lifecycle Action found with instance ID "+instance)
			return
		}
		if lose {
			writeError(w, ns, http.StatusInternalServerError, "InternalFailure", "An internal error occurred")
			return
		}
		if action == "RecordLifecycleActionHeartbeat" && hb != nil {
			hb()
		}
		writeOK(w, ns, action)
	case "RegisterTargets":
		if r.PostForm.Get("Version") != "2015-12-01" || r.PostForm.Get("TargetGroupArn") == "" || r.PostForm.Get("Targets.member.1.Id") == "" {
			writeError(w, ns, http.StatusBadRequest, "ValidationError", "TargetGroupArn and Targets are required")
			return
		}
		writeOK(w, ns, action)
	default:
		writeError(w, ns, http.StatusBadRequest, "InvalidAction", "The action "+action+" is not valid for this web service.")
	}
}

func writeOK(w http.ResponseWriter, ns, action string) {
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<%[1]sResponse xmlns="%[2]s"><%[1]sResult/><ResponseMetadata><RequestId>7c6e7d4b-0000-4000-8000-000000000001</RequestId></ResponseMetadata></%[1]sResponse>`, action, ns)
}

func writeError(w http.ResponseWriter, ns string, status int, code, msg string) {
	var b []byte
	b, _ = xml.Marshal(struct {
		XMLName xml.Name `xml:"ErrorResponse"`
		NS      string   `xml:"xmlns,attr"`
		Error   struct {
			Type    string `xml:"Type"`
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		} `xml:"Error"`
		RequestID string `xml:"RequestId"`
	}{NS: ns, Error: struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}{Type: "Sender", Code: code, Message: msg}, RequestID: "7c6e7d4b-0000-4000-8000-000000000002"})
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	w.Write(b)
}

// IMDS is a fake instance metadata service, IMDSv2 only: a GET without a
// token from PUT /latest/api/token is refused with 401.
type IMDS struct {
	URL string

	mu     sync.Mutex
	tokens int
	gets   []string
	srv    *httptest.Server
}

// Token is the session token the fake hands out.
const Token = "AQAEAFakeTokenFakeTokenFakeToken=="

// NewIMDS starts the fake for the life of the test.
func NewIMDS(t testing.TB, instanceID, region string) *IMDS {
	t.Helper()
	f := &IMDS{}
	values := map[string]string{
		"/latest/meta-data/instance-id":      instanceID,
		"/latest/meta-data/placement/region": region,
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPut && r.URL.Path == "/latest/api/token":
			ttl := r.Header.Get("X-Aws-Ec2-Metadata-Token-Ttl-Seconds")
			if ttl == "" {
				http.Error(w, "missing TTL", http.StatusBadRequest)
				return
			}
			f.mu.Lock()
			f.tokens++
			f.mu.Unlock()
			w.Header().Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", ttl)
			w.Write([]byte(Token))
		case r.Method == http.MethodGet:
			if r.Header.Get("X-Aws-Ec2-Metadata-Token") != Token {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			f.mu.Lock()
			f.gets = append(f.gets, r.URL.Path)
			f.mu.Unlock()
			v, ok := values[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Write([]byte(v))
		default:
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		}
	}))
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	return f
}

// Close stops the service.
func (f *IMDS) Close() { f.srv.Close() }

// Gets returns the metadata paths read, and how many tokens were issued.
func (f *IMDS) Gets() (paths []string, tokens int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.gets...), f.tokens
}
