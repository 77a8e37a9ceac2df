package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/testkit/storetest"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// storeTestRun runs lockstep with args (and extra commands) and returns
// stdout, stderr and the exit code.
func storeTestRun(t *testing.T, extra []*cli.Command, args ...string) (string, string, int) {
	t.Helper()
	a := New()
	a.Commands = append(a.Commands, extra...)
	var out, errb bytes.Buffer
	a.Writer, a.ErrWriter = &out, &errb
	err := a.RunContext(context.Background(), append([]string{"lockstep"}, args...))
	code := Exit(err, &errb)
	return out.String(), errb.String(), code
}

// FakeS3 starts gofakes3, the in-process S3 fake, with bucket, and returns
// the server, its backend and the environment of a run that uses it
// (endpoint, static credentials, a region), for Run's env (runIn): the
// process's environment is not touched, so the tests that use it can be
// parallel. It is exported for the external tests of the package too.
func FakeS3(t *testing.T, bucket string) (*httptest.Server, *s3mem.Backend, []string) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	return srv, backend, s3RunEnv(srv.URL, "AK", "SK")
}

// s3RunEnv is the environment of a run whose S3 store is at endpoint, with
// static credentials and a region (S3-compatible servers ignore it; the
// SDK signs with one).
func s3RunEnv(endpoint, accessKey, secretKey string) []string {
	return []string{"AWS_ENDPOINT_URL_S3=" + endpoint, "AWS_ACCESS_KEY_ID=" + accessKey, "AWS_SECRET_ACCESS_KEY=" + secretKey, "AWS_REGION=us-east-1"}
}

// storeTestManifests writes manifests of generations 1..n of release web
// into dir, gN.json, the first one signed (g1.json.sig, g1.json.bundle).
func storeTestManifests(t *testing.T, dir string, n int64) []*manifest.Signed {
	var out []*manifest.Signed
	for g := int64(1); g <= n; g++ {
		m := storetest.Manifest(t, "web", g, "")
		p := filepath.Join(dir, fmt.Sprintf("g%d.json", g))
		if err := os.WriteFile(p, m.Raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if g == 1 {
			s := storetest.Signed(m)
			os.WriteFile(p+".sig", s.Signature, 0o644)
			os.WriteFile(p+".sigstore.json", s.Bundle, 0o644)
		}
		out = append(out, m)
	}
	return out
}

func TestStoreCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url := "file://" + filepath.Join(dir, "store")
	ms := storeTestManifests(t, dir, 7)
	m := func(g int) string { return filepath.Join(dir, fmt.Sprintf("g%d.json", g)) }

	out, errs, code := storeTestRun(t, nil, "publish", "--store", url, "--by", "ci", m(1))
	if code != 0 || !strings.Contains(out, "web production generation 1 "+ms[0].Digest.String()) {
		t.Fatalf("publish g1: code %d, out %q, err %q", code, out, errs)
	}
	// An unsigned manifest is refused (exit 2) and nothing moves, unless
	// --allow-unsigned.
	_, errs, code = storeTestRun(t, nil, "publish", "--store", url, m(2))
	if code != ExitInvalid || !strings.Contains(errs, "unsigned") || !strings.Contains(errs, "--allow-unsigned") {
		t.Errorf("publish of an unsigned manifest: code %d, stderr %q; want 2 naming --allow-unsigned", code, errs)
	}
	if out, _, _ := storeTestRun(t, nil, "status", "--store", url, "--release", "web"); !strings.Contains(out, "generation  1") {
		t.Errorf("a refused unsigned publish moved the channel:\n%s", out)
	}
	for g := 2; g <= 7; g++ {
		if _, errs, code := storeTestRun(t, nil, "publish", "--allow-unsigned", "--store", url, m(g)); code != 0 {
			t.Fatalf("publish g%d: %d %s", g, code, errs)
		}
	}
	// The stale plan: refused, exit 1, naming both generations.
	_, errs, code = storeTestRun(t, nil, "publish", "--allow-unsigned", "--store", url, m(6))
	if code != ExitMismatch || !strings.Contains(errs, "generation 6 is not newer than generation 7") {
		t.Errorf("publish of an older generation: code %d, stderr %q; want 1 naming 6 and 7", code, errs)
	}
	// Bad input: exit 2.
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"apiVersion":"lockstep.dev/v1"`), 0o644)
	for _, args := range [][]string{
		{"publish", "--store", url, filepath.Join(dir, "bad.json")},
		{"publish", "--store", url, filepath.Join(dir, "missing.json")},
		{"publish", "--store", url},
		{"publish", m(1)},
		{"gc", "--store", url, "--release", "web"},
		{"status", "--store", url, "--release", "web", "--format", "yaml"},
		{"rollback", "--store", url, "--release", "web", "--to", "latest"},
		{"publish", "--store", "https://example.test/x", m(1)},
	} {
		if _, errs, code := storeTestRun(t, nil, args...); code != ExitInvalid {
			t.Errorf("%v: code %d (%s), want 2", args, code, errs)
		}
	}

	out, errs, code = storeTestRun(t, nil, "status", "--store", url, "--release", "web", "--format", "json")
	if code != 0 {
		t.Fatalf("status: %d %s", code, errs)
	}
	var st store.StatusReport
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status json: %v\n%s", err, out)
	}
	if st.Generation != 7 || st.Digest != ms[6].Digest || len(st.History) != 6 || st.History[5].MovedBy != "ci" {
		t.Errorf("status = %+v, want generation 7 with 6 earlier positions, the first by ci", st)
	}
	out, _, _ = storeTestRun(t, nil, "status", "--store", url, "--release", "web")
	for _, want := range []string{"generation  7", "digest      " + ms[6].Digest.String(), "history:", "signed      no"} {
		if !strings.Contains(out, want) {
			t.Errorf("status text lacks %q:\n%s", want, out)
		}
	}

	// An unsigned rollback is refused before anything moves.
	_, errs, code = storeTestRun(t, nil, "rollback", "--store", url, "--release", "web", "--to", "6")
	if code != ExitInvalid || !strings.Contains(errs, "--allow-unsigned") {
		t.Errorf("unsigned rollback: code %d, stderr %q; want 2 naming --allow-unsigned", code, errs)
	}
	// rollback --to 6 is generation 8.
	out, errs, code = storeTestRun(t, nil, "rollback", "--allow-unsigned", "--store", url, "--release", "web", "--to", "6", "--format", "json")
	if code != 0 {
		t.Fatalf("rollback: %d %s", code, errs)
	}
	var rb storeRollbackJSON
	if err := json.Unmarshal([]byte(out), &rb); err != nil || rb.Generation != 8 || rb.FromGeneration != 6 || !rb.Published || rb.Signed {
		t.Errorf("rollback = %+v (%v), want generation 8 from 6, published, unsigned", rb, err)
	}
	if !strings.Contains(errs, "unsigned") {
		t.Errorf("rollback does not warn that the manifest is unsigned: %q", errs)
	}
	// The signed first manifest came with its signature and bundle.
	out, _, _ = storeTestRun(t, nil, "rollback", "--store", url, "--release", "web", "--to", ms[0].Digest.String(), "--no-publish", "--output", filepath.Join(dir, "rb.json"))
	if !strings.Contains(out, "not published") {
		t.Errorf("rollback --no-publish: %q", out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "rb.json")); err != nil || !bytes.Contains(b, []byte(`"generation": 9`)) {
		t.Errorf("rollback --output wrote %s (%v), want generation 9", b, err)
	}

	// gc: a dry run by default; --in-use keeps what runs.
	report := filepath.Join(dir, "fleet.json")
	os.WriteFile(report, []byte(`{"groups":[{"manifestDigest":"`+ms[1].Digest.String()+`","instances":2}]}`), 0o644)
	out, _, code = storeTestRun(t, nil, "gc", "--store", url, "--release", "web", "--keep", "2", "--in-use", report)
	if code != 0 || !strings.Contains(out, "would delete "+ms[0].Digest.String()) || !strings.Contains(out, "pass --yes") {
		t.Errorf("gc dry run: %d\n%s", code, out)
	}
	out, errs, code = storeTestRun(t, nil, "gc", "--store", url, "--release", "web", "--keep", "2", "--in-use", report, "--yes", "--format", "json")
	if code != 0 {
		t.Fatalf("gc: %d %s", code, errs)
	}
	var gc store.GCReport
	if err := json.Unmarshal([]byte(out), &gc); err != nil {
		t.Fatal(err)
	}
	deleted := map[manifest.Digest]bool{}
	for _, e := range gc.Deleted {
		deleted[e.Digest] = true
	}
	if gc.DryRun || len(gc.Deleted) != 5 || deleted[ms[1].Digest] || deleted[ms[6].Digest] {
		t.Errorf("gc deleted %v, want generations 1 and 3-6 (2 runs, 7 is newest)", gc.Deleted)
	}
	if strings.Count(errs, "gc: deleted manifest") != 5 {
		t.Errorf("gc logged %d deletes, want 5:\n%s", strings.Count(errs, "gc: deleted manifest"), errs)
	}
}

func TestAutoGeneration(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url := "file://" + filepath.Join(dir, "store")
	storeTestManifests(t, dir, 3)
	for g := 1; g <= 3; g++ {
		storeTestRun(t, nil, "publish", "--allow-unsigned", "--store", url, filepath.Join(dir, fmt.Sprintf("g%d.json", g)))
	}
	cmd := &cli.Command{
		Name:  "test-next",
		Flags: storeFlags(),
		Action: func(c *cli.Context) error {
			n, err := autoGeneration(c.Context, c, newInvocation(nil), "web")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(c.App.Writer, n)
			return err
		},
	}
	if out, errs, code := storeTestRun(t, []*cli.Command{cmd}, "test-next", "--store", url); code != 0 || out != "4\n" {
		t.Errorf("--generation auto = %q (%d %s), want 4", out, code, errs)
	}
	if _, _, code := storeTestRun(t, []*cli.Command{cmd}, "test-next"); code != ExitInvalid {
		t.Errorf("--generation auto without --store: code %d, want 2", code)
	}
}

// TestStoreCorruptExit: damaged store content is "could not verify" (3),
// and publish leaves it as it found it.
func TestStoreCorruptExit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url := filepath.Join(dir, "store")
	ms := storeTestManifests(t, dir, 2)
	storeTestRun(t, nil, "publish", "--allow-unsigned", "--store", url, filepath.Join(dir, "g1.json"))
	ptr := filepath.Join(url, "web", "channels", "production.json")
	os.WriteFile(ptr, []byte(`{"release":"web","chan`), 0o644)
	if _, errs, code := storeTestRun(t, nil, "status", "--store", url, "--release", "web"); code != ExitUnverified || !strings.Contains(errs, "truncated") {
		t.Errorf("status on a truncated pointer: %d %q, want 3 saying truncated", code, errs)
	}
	if _, _, code := storeTestRun(t, nil, "publish", "--allow-unsigned", "--store", url, filepath.Join(dir, "g2.json")); code != ExitUnverified {
		t.Errorf("publish over a truncated pointer: %d, want 3", code)
	}
	if b, _ := os.ReadFile(ptr); string(b) != `{"release":"web","chan` {
		t.Errorf("publish overwrote the damaged pointer: %s", b)
	}
	// A manifest whose bytes are not its name.
	mf := filepath.Join(url, "web", "manifests", ms[0].Digest.String()+".json")
	os.WriteFile(mf, []byte(`{"apiVersion":"lockstep.dev/v1"}`), 0o644)
	out, errs, code := storeTestRun(t, nil, "gc", "--store", url, "--release", "web", "--keep", "0", "--yes")
	if code != ExitUnverified {
		t.Errorf("gc with a damaged pointer: %d %s %s, want 3", code, out, errs)
	}
}

// TestStoreCommandsS3 runs publish and status on s3:// through the real
// SDK configuration path (AWS_ENDPOINT_URL_S3, path-style, static
// credentials, from the run's own environment) against gofakes3, the
// in-process S3 fake.
func TestStoreCommandsS3(t *testing.T) {
	t.Parallel()
	_, backend, env := FakeS3(t, "releases")
	dir := t.TempDir()
	ms := storeTestManifests(t, dir, 2)
	url := "s3://releases/lockstep"
	for g := 1; g <= 2; g++ {
		if code, _, errs := runIn(t, env, "publish", "--allow-unsigned", "--store", url, filepath.Join(dir, fmt.Sprintf("g%d.json", g))); code != 0 {
			t.Fatalf("publish g%d on s3: %d %s", g, code, errs)
		}
	}
	if code, _, errs := runIn(t, env, "publish", "--allow-unsigned", "--store", url, filepath.Join(dir, "g1.json")); code != ExitMismatch {
		t.Errorf("publish of an older generation on s3: %d %s, want 1", code, errs)
	}
	code, out, errs := runIn(t, env, "status", "--store", url, "--release", "web", "--format", "json")
	var st store.StatusReport
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Generation != 2 || st.Digest != ms[1].Digest {
		t.Errorf("status on s3: %d %s %s", code, out, errs)
	}
	obj, err := backend.GetObject("releases", "lockstep/web/manifests/"+ms[0].Digest.String()+".sig", nil)
	if err != nil {
		t.Fatalf("the signature is not beside the manifest in the bucket: %v", err)
	}
	obj.Contents.Close()
}

// storeRollbackJSON is what the tests read of rollback's --format json
// (store.RollbackResult.Write).
type storeRollbackJSON struct {
	Digest         manifest.Digest `json:"digest"`
	FromGeneration int64           `json:"fromGeneration"`
	Generation     int64           `json:"generation"`
	Published      bool            `json:"published"`
	Signed         bool            `json:"signed"`
}
