package fleet

import (
	"bytes"
	"encoding/json"
	"flag"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/fleettest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, path string, got []byte) { fleettest.Golden(t, path, got, *update) }

// sampleReport is a fleet of five: three matching, one on a re-pushed
// digest serving an unknown asset, one behind by a generation, and one
// unreachable.
func sampleReport(t *testing.T) *Report {
	m, instances, at := sampleInstances(t)
	r := newReport(m, instances, 0.2)
	r.CheckedAt, r.DurationSeconds, r.Requests, r.Retries = at, 0.25, 9, 3
	return r
}

// sampleInstances are sampleReport's instances, in target order.
func sampleInstances(t *testing.T) (*manifest.Signed, []Instance, time.Time) {
	m := fleettest.Signed(t, 7)
	m.Location = "release.json"
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	ok := func(id string) Instance {
		return Instance{Name: id, InstanceID: id, ASG: "web", Target: "http://10.0.0." + id[len(id)-1:] + ":9464/v1/status", Spec: "asg:web",
			State: "admitted", Running: fleettest.Amd64.String(), Fingerprint: m.Manifest.Assets.Fingerprint.String(),
			Release: "store-web", Generation: 7, Manifest: m.Digest.String(), CheckedAt: &at}
	}
	repushed := ok("i-4")
	repushed.State, repushed.Running, repushed.Fingerprint = "refused", fleettest.Repushed.String(), "sha256:"+fleettest.Repushed.Hex[:60]+"aaaa"
	repushed.Differences = []Difference{
		{Kind: DiffImage, Got: fleettest.Repushed.String(), Want: []string{fleettest.Index.String(), fleettest.Amd64.String(), fleettest.Amd64Cfg.String()}, Message: "runs " + fleettest.Repushed.String() + ", which is not image web of the release for linux/amd64"},
		{Kind: DiffAssets, Got: repushed.Fingerprint, Assets: []string{"assets/app-ffff.js"}, Message: "serves 1 asset ID the manifest lacks"},
	}
	behind := ok("i-5")
	behind.Generation, behind.Manifest = 6, "sha256:"+fleettest.Index.Hex[:60]+"6666"
	behind.Differences = []Difference{{Kind: DiffGeneration, Got: "6", Want: []string{"7"}, Message: "checks against generation 6, the release is generation 7"}}
	gone := Instance{Name: "i-6", InstanceID: "i-6", Target: "http://10.0.0.6:9464/v1/status", Spec: "asg:web",
		Problem: &Problem{Kind: ProblemUnreachable, Message: "dial tcp 10.0.0.6:9464: connect: connection refused"}}
	return m, []Instance{ok("i-1"), ok("i-2"), ok("i-3"), repushed, behind, gone}, at
}

// Check folds instances into its tally in the order they are checked, not
// in target order: the report is the same whatever that order, agentless
// instances (whose manifest in use is the release's) included.
func TestTallyOrder(t *testing.T) {
	m, instances, _ := sampleInstances(t)
	agentless := Instance{Name: "ns/pod-1/web", Target: "k8s:ns", Spec: "k8s:ns", Running: fleettest.Amd64.String(), Agentless: true,
		Release: "store-web", Generation: 7, identity: fleettest.Index.String()}
	other := Instance{Name: "ns/pod-2/web", Target: "k8s:ns", Spec: "k8s:ns", Running: fleettest.Repushed.String(), Agentless: true,
		identity: fleettest.Repushed.String(), Differences: []Difference{{Kind: DiffImage, Got: fleettest.Repushed.String(), Message: "re-pushed"}}}
	instances = append(instances, agentless, other, instances[0], instances[4])
	instances[len(instances)-2].Name = "i-7"
	want, err := json.Marshal(newReport(m, instances, 0.2))
	if err != nil {
		t.Fatal(err)
	}
	n := len(instances)
	orders := map[string]func(k int) int{
		"reversed":     func(k int) int { return n - 1 - k },
		"odd first":    func(k int) int { return (2*k + 1) % (n | 1) },
		"rotated by 3": func(k int) int { return (k + 3) % n },
	}
	for name, order := range orders {
		tl := newTally(m, n)
		seen := map[int]bool{}
		for k := range n {
			i := order(k)
			seen[i] = true
			tl.add(i, instances[i])
		}
		if len(seen) != n {
			t.Fatalf("%s: not a permutation of %d (%d seen)", name, n, len(seen))
		}
		got, err := json.Marshal(tl.report(0.2))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the report differs from the one in target order:\n got %s\nwant %s", name, got, want)
		}
	}
}

func TestRender(t *testing.T) {
	r := sampleReport(t)
	for _, f := range []struct {
		file  string
		write func(*Report, *bytes.Buffer) error
	}{
		{"testdata/report.golden.json", func(r *Report, b *bytes.Buffer) error { return r.WriteJSON(b) }},
		{"testdata/report.golden.txt", func(r *Report, b *bytes.Buffer) error { return r.WriteText(b) }},
		{"testdata/report.golden.md", func(r *Report, b *bytes.Buffer) error { return r.WriteMarkdown(b) }},
		{"testdata/report.golden.sarif", func(r *Report, b *bytes.Buffer) error { return r.WriteSARIF(b) }},
	} {
		var b bytes.Buffer
		if err := f.write(r, &b); err != nil {
			t.Fatalf("%s: %v", f.file, err)
		}
		golden(t, f.file, b.Bytes())
	}
}

func TestReportJSONRoundTrips(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport(t).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var r Report
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("decoding the report: %v", err)
	}
	if len(r.InUse) != 2 || r.Summary.Result != ResultDivergent || r.Summary.UnreachableAllowed != 1 {
		t.Errorf("decoded report: inUse %+v summary %+v", r.InUse, r.Summary)
	}
}

// The fleet report is what `lockstep gc --in-use` reads.
func TestReportFeedsGC(t *testing.T) {
	r := sampleReport(t)
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	got, err := store.ParseInUse(b.Bytes())
	if err != nil {
		t.Fatalf("store.ParseInUse(report) = %v", err)
	}
	want := map[string]bool{}
	for _, u := range r.InUse {
		want[u.ManifestDigest] = true
	}
	seen := map[string]bool{}
	for _, d := range got {
		seen[d.String()] = true
	}
	if len(seen) != len(want) || len(want) != 2 {
		t.Errorf("gc reads %v from the report, want the inUse digests %v", seen, want)
	}
	for d := range want {
		if !seen[d] {
			t.Errorf("gc does not read %s", d)
		}
	}
}
