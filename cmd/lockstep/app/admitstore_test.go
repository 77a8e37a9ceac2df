package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/cmd/lockstep/app"
	"github.com/lockstep-dev/lockstep/manifest/trusted"
)

// TestAdmitStore is rollback protection end to end through the CLI, as an
// instance sees it: `admit --store` accepts generation 7 and records it;
// the same instance refuses generation 6 (a stale copy of the store, and a
// --manifest file) with manifest-rollback, exit 1; `lockstep rollback --to
// 6` publishes generation 8, which it accepts. A dry run never advances
// the state. With the store down it refuses (exit 3,
// dependency-unreachable) unless --max-age allows the cached manifest, and
// a cache older than --max-age is refused too.
func TestAdmitStore(t *testing.T) {
	t.Parallel()
	// env is the environment of the runs: none, then an S3 store that is
	// down.
	var env []string
	e := newAdmitEnv(t)
	dir := t.TempDir()
	live, stale := "file://"+filepath.Join(dir, "live"), "file://"+filepath.Join(dir, "stale")
	g6, g7 := e.manifest(t, 6), e.manifest(t, 7)
	for _, p := range []struct{ store, path string }{{live, g6}, {live, g7}, {stale, g6}} {
		if code, out, errs := runIn(t, env, "publish", "--allow-unsigned", "--store", p.store, p.path); code != 0 {
			t.Fatalf("publish %s to %s: exit %d\n%s\n%s", p.path, p.store, code, out, errs)
		}
	}
	admit := func(src []string, extra ...string) (int, admission.Decision, string) {
		t.Helper()
		code, out, errs := runIn(t, env, e.from(src, append(extra, "--format", "json")...)...)
		var d admission.Decision
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("admit %q: exit %d, stdout is not a JSON decision: %v\n%s\n%s", src, code, err, out, errs)
		}
		return code, d, errs
	}
	store := func(url string) []string { return []string{"--store", url, "--release", "store-web"} }
	state, err := trusted.Open(e.stateDir)
	if err != nil {
		t.Fatal(err)
	}
	accepted := func() trusted.Record {
		t.Helper()
		rec, _, err := state.Get("store-web")
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}

	// A dry run admits, and records nothing.
	if code, d, errs := admit(store(live), "--dry-run"); code != 0 || !d.Allowed || !d.DryRun || d.Generation != 7 {
		t.Fatalf("dry run of generation 7: exit %d, allowed %v, dry run %v, generation %d; want 0, admitted, 7\n%s", code, d.Allowed, d.DryRun, d.Generation, errs)
	}
	if rec := accepted(); rec.Generation != 0 {
		t.Fatalf("a dry run recorded generation %d in the trusted state", rec.Generation)
	}
	// Generation 7 is admitted and recorded.
	code, d, errs := admit(store(live))
	if code != 0 || !d.Allowed || d.Generation != 7 || d.ManifestLocation == "" {
		t.Fatalf("admit --store (generation 7): exit %d, %+v\n%s", code, d, errs)
	}
	if rec := accepted(); rec.Generation != 7 || rec.Digest != d.ManifestDigest {
		t.Fatalf("trusted state after admitting 7 = %+v, want generation 7, %s", rec, d.ManifestDigest)
	}
	// Generation 6, from a stale store or as a file, is a rollback.
	for name, src := range map[string][]string{"a stale store": store(stale), "a --manifest file": {"--manifest", g6, "--release", "store-web"}} {
		code, d, errs := admit(src)
		if code != 1 || d.Allowed || d.Unverified || !d.Has(admission.KindManifestRollback) || d.Generation != 6 {
			t.Errorf("generation 6 from %s after 7: exit %d, findings %+v; want exit 1 with manifest-rollback\n%s", name, code, d.Findings, errs)
		}
	}
	if rec := accepted(); rec.Generation != 7 {
		t.Fatalf("a refusal moved the trusted state to %d", rec.Generation)
	}
	// The rollback is a new, higher generation: 8, with 6's content.
	code, out, errs := runIn(t, env, "rollback", "--allow-unsigned", "--store", live, "--release", "store-web", "--to", "6", "--format", "json")
	var rb struct {
		Generation     int64 `json:"generation"`
		FromGeneration int64 `json:"fromGeneration"`
		Digest         string
	}
	if code != 0 || json.Unmarshal([]byte(out), &rb) != nil || rb.Generation != 8 || rb.FromGeneration != 6 {
		t.Fatalf("rollback --to 6: exit %d, %+v\n%s\n%s", code, rb, out, errs)
	}
	if code, d, errs := admit(store(live), "--dry-run"); code != 0 || d.Generation != 8 || accepted().Generation != 7 {
		t.Fatalf("dry run of generation 8: exit %d, generation %d, state %d; want 0, 8, and the state still at 7\n%s", code, d.Generation, accepted().Generation, errs)
	}
	code, d, errs = admit(store(live))
	if code != 0 || !d.Allowed || d.Generation != 8 || d.ManifestDigest.String() != rb.Digest {
		t.Fatalf("admit the rollback: exit %d, generation %d %s; want 0, generation 8 %s\n%s", code, d.Generation, d.ManifestDigest, rb.Digest, errs)
	}
	if rec := accepted(); rec.Generation != 8 {
		t.Fatalf("trusted state after admitting the rollback = %d, want 8", rec.Generation)
	}

	// The store goes down (an S3 endpoint that refuses connections).
	down := store("s3://releases/lockstep")
	env = []string{"AWS_ENDPOINT_URL_S3=http://127.0.0.1:1", "AWS_ACCESS_KEY_ID=AK", "AWS_SECRET_ACCESS_KEY=SK"}
	code, d, errs = admit(down)
	if code != 3 || d.Allowed || !d.Unverified || !d.Has(admission.KindDependencyUnreachable) {
		t.Errorf("store down, no --max-age: exit %d, findings %+v; want exit 3, dependency-unreachable\n%s", code, d.Findings, errs)
	}
	// With --max-age and a fresh cache: admitted from the cache, and said.
	before := accepted()
	code, d, errs = admit(down, "--max-age", "1h")
	if code != 0 || !d.Allowed || d.Generation != 8 || !d.ManifestCachedAt.Equal(before.AcceptedAt) || !strings.Contains(d.ManifestLocation, "trusted cache") {
		t.Errorf("store down, --max-age 1h, cache fresh: exit %d, generation %d, cachedAt %s, location %q; want 0, the cached 8 accepted at %s\n%s",
			code, d.Generation, d.ManifestCachedAt, d.ManifestLocation, before.AcceptedAt, errs)
	}
	if !strings.Contains(errs, "using the cached manifest") {
		t.Errorf("admitting from the cache is not said on stderr:\n%s", errs)
	}
	if code, out, _ := runIn(t, env, e.from(down, "--max-age", "1h")...); code != 0 || !strings.Contains(out, "from the trusted cache") {
		t.Errorf("text report of a cached admission: exit %d\n%s", code, out)
	}
	if rec := accepted(); !rec.AcceptedAt.Equal(before.AcceptedAt) {
		t.Errorf("admitting from the cache moved acceptedAt from %s to %s: the cache must not get fresher for being used", before.AcceptedAt, rec.AcceptedAt)
	}
	// A cache accepted longer ago than --max-age is refused.
	rec := accepted()
	rec.AcceptedAt = time.Now().Add(-2 * time.Hour).UTC()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.stateDir, "store-web.state.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, d, errs = admit(down, "--max-age", "1h")
	if code != 3 || d.Allowed || !d.Has(admission.KindDependencyUnreachable) || !strings.Contains(errs+findingMessages(d), "over the maximum age of 1h0m0s") {
		t.Errorf("store down, cache 2h old, --max-age 1h: exit %d, findings %+v; want exit 3, dependency-unreachable over the maximum age\n%s", code, d.Findings, errs)
	}
}

func findingMessages(d admission.Decision) string {
	var b strings.Builder
	for _, f := range d.Findings {
		b.WriteString(f.Message + "\n")
	}
	return b.String()
}

// TestAdmitStoreS3: admit reads a channel of an s3:// store (gofakes3, the
// in-process S3 fake, through the SDK's real configuration path), and
// when that server goes away, refuses (exit 3) unless --max-age lets the
// copy it admitted stand in.
func TestAdmitStoreS3(t *testing.T) {
	t.Parallel()
	srv, _, env := app.FakeS3(t, "releases")
	e := newAdmitEnv(t)
	url := "s3://releases/lockstep"
	g3 := e.manifest(t, 3) // once: a second call may land in another second, another digest
	if code, out, errs := runIn(t, env, "publish", "--allow-unsigned", "--store", url, g3); code != 0 {
		t.Fatalf("publish to s3: exit %d\n%s\n%s", code, out, errs)
	}
	src := []string{"--store", url, "--release", "store-web"}
	if code, out, errs := runIn(t, env, e.from(src)...); code != 0 || !strings.HasPrefix(out, "ADMITTED against store-web@3") {
		t.Fatalf("admit --store s3: exit %d\n%s\n%s", code, out, errs)
	}
	// The S3 requests go through the gate's client: they count in the
	// decision (and S3's certificate would be in its TLS findings).
	requests := func(src []string) int64 {
		t.Helper()
		code, out, errs := runIn(t, env, e.from(src, "--format", "json", "--dry-run")...)
		var d admission.Decision
		if err := json.Unmarshal([]byte(out), &d); err != nil || code != 0 {
			t.Fatalf("exit %d, %v\n%s\n%s", code, err, out, errs)
		}
		return d.Requests
	}
	if fromS3, fromFile := requests(src), requests([]string{"--manifest", g3, "--release", "store-web"}); fromS3 <= fromFile {
		t.Errorf("the decision counts %d requests with --store s3, %d with --manifest FILE: the S3 requests are not counted", fromS3, fromFile)
	}
	srv.Close()
	if code, out, errs := runIn(t, env, e.from(src)...); code != 3 || !strings.Contains(out, "dependency-unreachable") {
		t.Errorf("S3 gone, no --max-age: exit %d, want 3 with dependency-unreachable\n%s\n%s", code, out, errs)
	}
	if code, out, errs := runIn(t, env, e.from(src, "--max-age", "10m")...); code != 0 || !strings.Contains(out, "from the trusted cache") {
		t.Errorf("S3 gone, --max-age 10m: exit %d, want 0 from the trusted cache\n%s\n%s", code, out, errs)
	}
}
