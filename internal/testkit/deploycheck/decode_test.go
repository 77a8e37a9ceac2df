package deploycheck

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that records what Decode reports, so that a
// test can show it fails where it must (Fatalf ends the goroutine, as
// testing's does).
type recorder struct {
	testing.TB
	msgs  []string
	fatal bool
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
	r.fatal = true
	runtime.Goexit()
}

// decode runs Objects.Decode on raw with a recorder.
func decode(raw string, keep ...string) (*Objects, *recorder) {
	r := &recorder{}
	var o Objects
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.Decode(r, "f.yaml", []byte(raw), keep...)
	}()
	<-done
	return &o, r
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: lockstep, namespace: lockstep}
spec:
  replicas: 2
`

// TestDecodeRefuses shows that what the API server's strict field
// validation refuses, and a kind no test was taught, fail the test that
// reads them: a setting that is silently dropped is a setting not checked.
func TestDecodeRefuses(t *testing.T) {
	for _, tt := range []struct {
		name, raw, want string
		fatal           bool
	}{
		{"unknown field", deployment + "  replica: 3\n", `unknown field "spec.replica"`, false},
		{"wrong case", deployment + "  Replicas: 3\n", `unknown field "spec.Replicas"`, false},
		{"duplicate field", deployment + "  replicas: 3\n", `mapping key "replicas" already defined`, true},
		{"unknown kind", "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c}\n", "a kind this test does not know", true},
		{"kind at another version", "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: d}\n", "a kind this test does not know", true},
		{"not an object", "- a\n- b\n", "document 0 is not an object", true},
		{"not YAML", "a: [\n", "f.yaml document 0", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, r := decode(tt.raw)
			if r.fatal != tt.fatal || !strings.Contains(strings.Join(r.msgs, "\n"), tt.want) {
				t.Errorf("reported %q (fatal %v), want %q (fatal %v)", r.msgs, r.fatal, tt.want, tt.fatal)
			}
		})
	}
}

// TestDecode shows that every document lands in its API type, empty
// documents are skipped, and the kinds a test keeps stay as objects.
func TestDecode(t *testing.T) {
	raw := deployment + "---\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: lockstep}\n" +
		"---\napiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: i}\n"
	o, r := decode(raw, "cert-manager.io/v1 Issuer")
	if len(r.msgs) != 0 {
		t.Fatalf("reported %q", r.msgs)
	}
	if len(o.Deployments) != 1 || *o.Deployments[0].Spec.Replicas != 2 || len(o.Services) != 1 || o.Services[0].Name != "s" {
		t.Errorf("decoded %+v", o)
	}
	if is := o.Other["cert-manager.io/v1 Issuer"]; len(is) != 1 || Key(is[0]) != "cert-manager.io/v1 Issuer <nil>/i" {
		t.Errorf("kept %v", o.Other)
	}
}
