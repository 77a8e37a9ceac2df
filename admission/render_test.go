package admission_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
)

// renderedDecisions are fixed decisions with one of everything the text
// shows: admitted from the trusted cache, unsigned, in a dry run; refused
// with findings and actions; not verified; and one that got no manifest.
func renderedDecisions() []admission.Decision {
	at := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	obs := &running.Observation{Source: "docker:web", Container: "web", ImageID: index, Platform: "linux/amd64"}

	admitted := admission.Decision{At: at, Platform: "linux/amd64", Image: "web", Release: "store-web", Generation: 7, ManifestDigest: dg("a"),
		ManifestCachedAt: at.Add(-time.Hour), Unsigned: true, DryRun: true, Running: obs, RunningDigest: index, Match: "index",
		ImageSignature: admission.SignaturesEmbedded, Served: []string{"js/app.1111.js"}, ServedFingerprint: dg("f"), CDNChecked: 3,
		Closure: &admission.Closure{Graph: true, Referenced: 1, Assets: 3, Checked: 3, Max: admission.DefaultMaxClosure}, InstanceChecked: 2,
		Requests: 12, Duration: 1234567 * time.Microsecond, Waited: 800 * time.Millisecond}
	admitted.Add(admission.Finding{Kind: admission.KindTLSExpiring, Severity: admission.Warn, Subject: "cdn.example:443", Message: "expires in 5 days"})

	refused := admission.Decision{At: at, Platform: "linux/amd64", Image: "web", Release: "store-web", Generation: 7, ManifestDigest: dg("a"),
		Running: &running.Observation{Source: "docker:web"}, RunningDigest: stranger, ImageSignature: admission.SignaturesRegistry,
		Served: []string{"js/app.9999.js"}, ServedFingerprint: dg("e"), CDNChecked: 1,
		Closure:  &admission.Closure{Referenced: 1, Assets: 1, Checked: 1, Max: admission.DefaultMaxClosure},
		Requests: 54, Duration: 28 * time.Millisecond}
	refused.Add(admission.Finding{Kind: admission.KindImageDigestMismatch, Subject: "image web", Got: stranger.String(), Want: index.String(), Message: "docker:web runs " + stranger.String()})
	refused.Add(admission.Finding{Kind: admission.KindAssetMissingOnCDN, Subject: "js/app.9999.js", Message: "missing on the CDN"})
	refused.Actions = []admission.Action{
		{Kind: "complete-lifecycle-action", Target: "store-web/lockstep-boot-gate", Result: "ABANDON", Status: admission.ActionDone, Heartbeats: 2},
		{Kind: "register-targets", Target: "arn:aws:elasticloadbalancing:eu-west-1:1:targetgroup/web/1", Status: admission.ActionFailed, Error: "throttled"},
	}

	unverified := admission.Decision{At: at, Release: "store-web", Generation: 7, ManifestDigest: dg("a"),
		Running: &running.Observation{Source: "ecs:web"}, Requests: 3, Duration: time.Second}
	unverified.Add(admission.Finding{Kind: admission.KindDependencyUnreachable, Subject: "registry.example", Message: "connection refused"})

	nothing := admission.Decision{At: at}
	nothing.Add(admission.Finding{Kind: admission.KindManifestInvalid, Message: "generation: must be at least 1"})
	return []admission.Decision{admitted, refused, unverified, nothing}
}

func TestDecisionText(t *testing.T) {
	var b bytes.Buffer
	for _, d := range renderedDecisions() {
		if err := d.Write(&b, "text"); err != nil {
			t.Fatal(err)
		}
		b.WriteString("--\n")
	}
	path := filepath.Join("testdata", "decision.golden.txt")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != b.String() {
		t.Errorf("decision text changed (go test -update rewrites %s):\n--- got\n%s\n--- want\n%s", path, b.String(), want)
	}
}

// TestDecisionWriteJSON: Write's JSON is the decision's documented shape,
// indented (what TestDecisionJSON pins), with one trailing newline.
func TestDecisionWriteJSON(t *testing.T) {
	for _, d := range renderedDecisions() {
		var b bytes.Buffer
		if err := d.Write(&b, "json"); err != nil {
			t.Fatal(err)
		}
		want, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if b.String() != string(want)+"\n" {
			t.Errorf("Write(json) =\n%s\nwant\n%s", b.String(), want)
		}
	}
	// WriteFile holds those bytes; a path it cannot write is an error.
	d := renderedDecisions()[0]
	path := filepath.Join(t.TempDir(), "decision.json")
	if err := d.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := d.Write(&want, "json"); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != want.String() {
		t.Errorf("WriteFile wrote %q, %v; want Write's JSON", got, err)
	}
	if err := d.WriteFile(filepath.Join(t.TempDir(), "missing", "decision.json")); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
	var b bytes.Buffer
	if err := d.Write(&b, "yaml"); err == nil || b.Len() != 0 {
		t.Errorf("Write(yaml) = %v, wrote %q; want an error, nothing written", err, b.String())
	}
}
