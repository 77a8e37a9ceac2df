package awsfake

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Instance is one EC2 instance.
type Instance struct {
	ID        string
	PrivateIP string
	// State is the EC2 state name; default "running".
	State string
	// ASG is the Auto Scaling group the instance belongs to, if any, and
	// LifecycleState its state there (default "InService").
	ASG            string
	LifecycleState string
	Tags           map[string]string
	AZ             string
}

// Target is one registered target of a target group.
type Target struct {
	// ID is an instance ID or an IP address.
	ID    string
	Port  int32
	State string
}

// Request is one API call the fake received.
type Request struct {
	Action string
	Params url.Values
}

// Get returns a parameter of the call.
func (r Request) Get(k string) string { return r.Params.Get(k) }

// AWS is the fake Auto Scaling, ELBv2, EC2 and ECS endpoint (one server
// for all: the Action names do not collide, and ECS's JSON protocol is told
// apart by its X-Amz-Target header). Set its exported fields before serving;
// it is safe for concurrent requests.
type AWS struct {
	Instances    []Instance
	TargetGroups map[string][]Target
	// ECSServices holds each ECS service's tasks, keyed CLUSTER/SERVICE.
	ECSServices map[string][]ECSTask
	// PageSize, if positive, splits DescribeInstances and
	// DescribeAutoScalingGroups answers into pages.
	PageSize int
	// URL is the endpoint NewAWS started.
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

// NewAWS starts a fake on loopback for the life of the test, with a
// lifecycle action active for each instance given.
func NewAWS(t testing.TB, lifecycleInstances ...string) *AWS {
	t.Helper()
	f := &AWS{active: map[string]bool{}}
	for _, i := range lifecycleInstances {
		f.active[i] = true
	}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	return f
}

// Close stops the endpoint NewAWS started: every later call fails to
// connect.
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
	if f.failAction == nil {
		f.failAction = map[string]int{}
	}
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

// The XML namespaces of the services' answers.
const (
	asNS  = "http://autoscaling.amazonaws.com/doc/2011-01-01/"
	elbNS = "http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/"
	ec2NS = "http://ec2.amazonaws.com/doc/2016-11-15/"
)

func namespace(action string) string {
	switch action {
	case "RegisterTargets", "DescribeTargetHealth":
		return elbNS
	case "DescribeInstances":
		return ec2NS
	}
	return asNS
}

func (f *AWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "want POST", http.StatusMethodNotAllowed)
		return
	}
	if target := r.Header.Get("X-Amz-Target"); strings.HasPrefix(target, ecsTarget) {
		f.serveECS(w, r, strings.TrimPrefix(target, ecsTarget))
		return
	}
	if err := r.ParseForm(); err != nil {
		writeError(w, asNS, http.StatusBadRequest, "MalformedQueryString", err.Error())
		return
	}
	action := r.Form.Get("Action")
	f.mu.Lock()
	f.requests = append(f.requests, Request{Action: action, Params: r.Form})
	fail := f.failAction[action] > 0
	if fail {
		f.failAction[action]--
	}
	f.mu.Unlock()
	ns := namespace(action)
	if r.Header.Get("Authorization") == "" {
		writeError(w, ns, http.StatusForbidden, "MissingAuthenticationToken", "Request is missing Authentication Token")
		return
	}
	if fail {
		writeError(w, ns, http.StatusServiceUnavailable, "ServiceUnavailable", "Service is unavailable")
		return
	}
	switch action {
	case "CompleteLifecycleAction", "RecordLifecycleActionHeartbeat":
		f.lifecycle(w, r, action)
	case "RegisterTargets":
		if r.Form.Get("Version") != "2015-12-01" || r.Form.Get("TargetGroupArn") == "" || r.Form.Get("Targets.member.1.Id") == "" {
			writeError(w, ns, http.StatusBadRequest, "ValidationError", "TargetGroupArn and Targets are required")
			return
		}
		writeOK(w, ns, action)
	case "DescribeAutoScalingGroups":
		f.describeGroups(w, r)
	case "DescribeAutoScalingInstances":
		f.describeASGInstances(w, r)
	case "DescribeInstances":
		f.describeInstances(w, r)
	case "DescribeTargetHealth":
		f.describeTargetHealth(w, r)
	default:
		writeError(w, ns, http.StatusBadRequest, "InvalidAction", "The action "+action+" is not valid for this web service.")
	}
}

// lifecycle answers CompleteLifecycleAction and
// RecordLifecycleActionHeartbeat for an instance with an active action.
func (f *AWS) lifecycle(w http.ResponseWriter, r *http.Request, action string) {
	if r.Form.Get("Version") != "2011-01-01" {
		writeError(w, asNS, http.StatusBadRequest, "InvalidAction", "unknown version")
		return
	}
	instance := r.Form.Get("InstanceId")
	f.mu.Lock()
	active := f.active[instance]
	hb := f.onHeartbeat
	lose := false
	if action == "CompleteLifecycleAction" && active {
		if res := r.Form.Get("LifecycleActionResult"); res != "CONTINUE" && res != "ABANDON" {
			f.mu.Unlock()
			writeError(w, asNS, http.StatusBadRequest, "ValidationError", "LifecycleActionResult must be CONTINUE or ABANDON")
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
		writeError(w, asNS, http.StatusBadRequest, "ValidationError", "No active Lifecycle Action found with instance ID "+instance)
		return
	}
	if lose {
		writeError(w, asNS, http.StatusInternalServerError, "InternalFailure", "An internal error occurred")
		return
	}
	if action == "RecordLifecycleActionHeartbeat" && hb != nil {
		hb()
	}
	writeOK(w, asNS, action)
}

func writeOK(w http.ResponseWriter, ns, action string) {
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<%[1]sResponse xmlns="%[2]s"><%[1]sResult/><ResponseMetadata><RequestId>7c6e7d4b-0000-4000-8000-000000000001</RequestId></ResponseMetadata></%[1]sResponse>`, action, ns)
}

// errorBody is the query protocol's error document.
type errorBody struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	NS      string   `xml:"xmlns,attr"`
	Error   struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Error"`
	RequestID string `xml:"RequestId"`
}

func writeError(w http.ResponseWriter, ns string, status int, code, msg string) {
	e := errorBody{NS: ns, RequestID: "7c6e7d4b-0000-4000-8000-000000000002"}
	e.Error.Type, e.Error.Code, e.Error.Message = "Sender", code, msg
	b, _ := xml.Marshal(e)
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	w.Write(b)
}
