package app

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	ggcr "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/lockstep-dev/lockstep/internal/testkit/golden"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/pin"
)

// pinCLI runs the lockstep CLI with args and a fresh pin cache (--cache,
// after the pin command's name; the flag, not LOCKSTEP_CACHE, so that
// tests may run in parallel), and returns stdout, stderr and the exit code.
func pinCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	if i := slices.Index(args, "pin"); i >= 0 {
		args = slices.Insert(slices.Clone(args), i+1, "--cache", t.TempDir())
	}
	code, out, errb := run(t, args...)
	return out, errb, code
}

// image is a deterministic image (same bytes every run) of a platform;
// label tells images of one platform apart.
func image(t *testing.T, os, arch, label string) v1.Image {
	t.Helper()
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: os, Architecture: arch, Config: v1.Config{Labels: map[string]string{"v": label}}})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func pushImg(t *testing.T, ref string, img v1.Image) {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatal(err)
	}
}

func pushIdx(t *testing.T, ref, label string) {
	t.Helper()
	idx := mutate.IndexMediaType(mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: image(t, "linux", "amd64", label), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: image(t, "linux", "arm64", label), Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}}},
		mutate.IndexAddendum{Add: image(t, "unknown", "unknown", label), Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"}, Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest"}}},
	), types.OCIImageIndex)
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(tag, idx); err != nil {
		t.Fatal(err)
	}
}

// pinRegistry starts an in-memory registry holding app:v1 (one image) and
// multi:v1 (an index of two platforms and an attestation).
func pinRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	pushImg(t, host+"/app:v1", image(t, "linux", "amd64", "1"))
	pushIdx(t, host+"/multi:v1", "1")
	return host
}

func TestPinText(t *testing.T) {
	t.Parallel()
	host := pinRegistry(t)
	out, errs, code := pinCLI(t, "pin", host+"/app:v1", "web="+host+"/multi:v1")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], host+"/app:v1@sha256:") || !strings.HasPrefix(lines[1], host+"/multi:v1@sha256:") {
		t.Errorf("stdout =\n%s\nwant one repo:tag@sha256:… line per reference, in order", out)
	}
	// Each line pins again to itself: stdout pipes back in.
	again, errs, code := pinCLI(t, append([]string{"pin"}, lines...)...)
	if code != ExitOK || again != out {
		t.Errorf("pinning the output again: exit %d, stdout\n%s\nstderr %s", code, again, errs)
	}
}

// TestPinJSON checks the JSON shape against testdata/pin.json.golden (the
// registry's address replaced by REGISTRY).
func TestPinJSON(t *testing.T) {
	t.Parallel()
	host := pinRegistry(t)
	out, errs, code := pinCLI(t, "pin", "--format", "json", "app="+host+"/app:v1", "web="+host+"/multi:v1")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got := strings.ReplaceAll(out, host, "REGISTRY")
	golden.Check(t, "pin.json.golden", got)
	// The same with the flag after the references.
	if after, errs, code := pinCLI(t, "pin", "app="+host+"/app:v1", "web="+host+"/multi:v1", "--format", "json"); code != ExitOK || after != out {
		t.Errorf("pin REF... --format json = exit %d, %q (%s); want the same JSON as pin --format json REF...", code, after, errs)
	}
	var r pin.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Images) != 2 || len(r.Images[1].Platforms) != 2 {
		t.Errorf("JSON does not decode to two images, the index with two platforms: %v", err)
	}
}

func writePrevious(t *testing.T, host string) string {
	t.Helper()
	return writePreviousFrom(t, "app="+host+"/app:v1", "web="+host+"/multi:v1")
}

// writePreviousFrom pins refs and writes them as a release manifest.
func writePreviousFrom(t *testing.T, refs ...string) string {
	t.Helper()
	out, errs, code := pinCLI(t, append([]string{"pin", "--format", "json"}, refs...)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r pin.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	m := manifest.Manifest{APIVersion: manifest.APIVersion, Kind: manifest.Kind,
		Release: manifest.Release{Name: "shop", Generation: 1, CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		Assets:  manifest.Assets{Fingerprint: manifest.Fingerprint(nil)}}
	for _, im := range r.Images {
		m.Images = append(m.Images, im.Image)
	}
	return writeManifestFile(t, &m, filepath.Join(t.TempDir(), "previous.json"))
}

func TestPinMovedTag(t *testing.T) {
	t.Parallel()
	host := pinRegistry(t)
	prev := writePrevious(t, host)
	args := []string{"pin", "--previous", prev, "app=" + host + "/app:v1", "web=" + host + "/multi:v1"}
	if out, errs, code := pinCLI(t, args...); code != ExitOK || out == "" {
		t.Fatalf("nothing moved: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	old, _, _ := pinCLI(t, "pin", host+"/app:v1")
	pushIdx(t, host+"/multi:v1", "2") // the re-push behind the 2021 outage
	pushImg(t, host+"/app:v1", image(t, "linux", "amd64", "2"))

	out, errs, code := pinCLI(t, args...)
	if code != ExitMismatch || out != "" {
		t.Errorf("moved tags: exit %d, stdout %q; want 1 and nothing on stdout", code, out)
	}
	for _, s := range []string{"web", "app", "2 moved tags"} {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr %q does not name %s", errs, s)
		}
	}
	out, _, code = pinCLI(t, append([]string{"--log-level", "error", "pin", "--format", "json"}, args[1:]...)...)
	var r pin.Report
	if err := json.Unmarshal([]byte(out), &r); code != ExitMismatch || err != nil || len(r.Moved) != 2 || r.Moved[0].Allowed {
		t.Errorf("json moved: exit %d, %v, report %+v", code, err, r.Moved)
	}
	// One allowed is not enough; both are.
	if _, errs, code := pinCLI(t, append(args[:1:1], append([]string{"--allow-moved-tag", "web"}, args[1:]...)...)...); code != ExitMismatch || strings.Contains(errs, "web (") {
		t.Errorf("one of two allowed: exit %d, stderr %s; want 1 naming only app", code, errs)
	}
	full := append(args[:1:1], append([]string{"--allow-moved-tag", "web", "--allow-moved-tag", host + "/app:v1"}, args[1:]...)...)
	if out, errs, code := pinCLI(t, full...); code != ExitOK || strings.Count(out, "\n") != 2 {
		t.Errorf("both allowed: exit %d, stdout %q, stderr %s", code, out, errs)
	}

	// A tag@digest reference whose tag moved: refused, and reported.
	out, _, code = pinCLI(t, "--log-level", "error", "pin", "--format", "json", strings.TrimSpace(old))
	r = pin.Report{}
	if err := json.Unmarshal([]byte(out), &r); code != ExitMismatch || err != nil || len(r.Moved) != 1 || r.Moved[0].Previous.String() != r.Images[0].Digest.String() {
		t.Errorf("pin --format json %s after a re-push: exit %d, %v, report %+v", strings.TrimSpace(old), code, err, r)
	}
	out, _, code = pinCLI(t, "pin", "--allow-moved-tag", host+"/app:v1", strings.TrimSpace(old))
	if code != ExitOK || out != old {
		t.Errorf("allowed: exit %d, stdout %q, want the pinned digest kept: %q", code, out, old)
	}
}

func TestPinWrite(t *testing.T) {
	t.Parallel()
	host := pinRegistry(t)
	dir := t.TempDir()
	k8s := filepath.Join(dir, "deploy.yaml")
	in := "# keep me\napiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: " + host + "/multi:v1 # and me\n      - name: other\n        image: " + host + "/other:v9\n"
	os.WriteFile(k8s, []byte(in), 0o644)
	out, errs, code := pinCLI(t, "pin", "--write", k8s, host+"/multi:v1")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	pinned := strings.TrimSpace(out)
	got, _ := os.ReadFile(k8s)
	if want := strings.Replace(in, host+"/multi:v1 ", pinned+" ", 1); string(got) != want {
		t.Errorf("deploy.yaml =\n%s\nwant\n%s", got, want)
	}

	// Without references, pin what the files name (other:v9 does not exist).
	compose := filepath.Join(dir, "compose.yaml")
	os.WriteFile(compose, []byte("services:\n  app:\n    image: "+host+"/app:v1\n"), 0o644)
	out, _, code = pinCLI(t, "pin", "--write", compose)
	if code != ExitOK || !strings.HasPrefix(out, host+"/app:v1@sha256:") {
		t.Errorf("pin --write compose.yaml: exit %d, stdout %q", code, out)
	}
	if got, _ := os.ReadFile(compose); !strings.Contains(string(got), strings.TrimSpace(out)) {
		t.Errorf("compose.yaml not rewritten:\n%s", got)
	}

	// A tag moved away from the digest a file pins is refused, and the file
	// is left alone; allowed, it is rewritten.
	pushImg(t, host+"/app:v1", image(t, "linux", "amd64", "2"))
	before, _ := os.ReadFile(compose)
	if _, errs, code := pinCLI(t, "pin", "--write", compose); code != ExitMismatch {
		t.Errorf("pin --write of a moved tag: exit %d, stderr %s; want 1", code, errs)
	}
	if after, _ := os.ReadFile(compose); !bytes.Equal(before, after) {
		t.Errorf("a refused pin changed the file")
	}
	if _, errs, code := pinCLI(t, "pin", "--allow-moved-tag", host+"/app:v1", "--write", compose); code != ExitOK {
		t.Errorf("pin --write --allow-moved-tag: exit %d, %s", code, errs)
	}
	if after, _ := os.ReadFile(compose); bytes.Equal(before, after) {
		t.Errorf("an allowed move was not written")
	}
}

func TestPinBadInput(t *testing.T) {
	t.Parallel()
	host := pinRegistry(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	badData := "apiVersion: v1\nkind: Pod\nspec: [\n"
	os.WriteFile(bad, []byte(badData), 0o644)
	notManifest := filepath.Join(dir, "m.json")
	os.WriteFile(notManifest, []byte(`{"apiVersion":"lockstep.dev/v1"}`), 0o644)
	downHost := testenv.RefusedAddr(t)
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"no references", []string{"pin"}, ExitInvalid},
		{"bad reference", []string{"pin", "Bad/Ref"}, ExitInvalid},
		{"bad digest", []string{"pin", host + "/app@sha256:ABC"}, ExitInvalid},
		{"bad format", []string{"pin", "--format", "xml", host + "/app:v1"}, ExitInvalid},
		{"bad platform", []string{"pin", "--platform", "linux", host + "/app:v1"}, ExitInvalid},
		{"missing platform", []string{"pin", "--platform", "windows/amd64", host + "/multi:v1"}, ExitInvalid},
		{"bad name", []string{"pin", "Web=" + host + "/app:v1"}, ExitInvalid},
		{"name twice", []string{"pin", "web=" + host + "/app:v1", "web=" + host + "/multi:v1"}, ExitInvalid},
		{"unknown flag", []string{"pin", "--nope", host + "/app:v1"}, ExitInvalid},
		{"bad concurrency", []string{"pin", "--concurrency", "0", host + "/app:v1"}, ExitInvalid},
		{"missing tag", []string{"pin", host + "/app:v2"}, ExitInvalid},
		{"missing repository", []string{"pin", host + "/nope:v1"}, ExitInvalid},
		{"previous missing", []string{"pin", "--previous", filepath.Join(dir, "none.json"), host + "/app:v1"}, ExitInvalid},
		{"previous invalid", []string{"pin", "--previous", notManifest, host + "/app:v1"}, ExitInvalid},
		{"write missing", []string{"pin", "--write", filepath.Join(dir, "none.yaml"), host + "/app:v1"}, ExitInvalid},
		{"write a directory", []string{"pin", "--write", dir + "/x.yaml/", host + "/app:v1"}, ExitInvalid},
		{"previous a directory", []string{"pin", "--previous", dir, host + "/app:v1"}, ExitInvalid},
		{"write unparsable", []string{"pin", "--write", bad, host + "/app:v1"}, ExitInvalid},
		{"write unknown format", []string{"pin", "--write", notManifest + ".txt", host + "/app:v1"}, ExitInvalid},
		{"registry down", []string{"pin", downHost + "/app:v1"}, ExitUnverified},
	}
	for _, tt := range tests {
		out, errs, code := pinCLI(t, tt.args...)
		if code != tt.code {
			t.Errorf("%s: lockstep %s: exit %d, want %d; stderr %s", tt.name, strings.Join(tt.args, " "), code, tt.code, errs)
		}
		if out != "" {
			t.Errorf("%s: stdout %q, want nothing", tt.name, out)
		}
		if errs == "" {
			t.Errorf("%s: nothing on stderr", tt.name)
		}
	}
	if got, _ := os.ReadFile(bad); string(got) != badData {
		t.Errorf("an unparsable --write file was changed")
	}
}

// TestPinDistribution runs lockstep pin against Debian's docker-registry:
// push, pin, re-push, pin again.
func TestPinDistribution(t *testing.T) {
	t.Parallel()
	host := testenv.Registry(t)
	pushImg(t, host+"/shop/web:v1", image(t, "linux", "amd64", "1"))
	pushIdx(t, host+"/shop/multi:v1", "1")
	prev := writePreviousFrom(t, "web="+host+"/shop/web:v1", "multi="+host+"/shop/multi:v1")
	dir := t.TempDir()
	compose := filepath.Join(dir, "compose.yaml")
	os.WriteFile(compose, []byte("services:\n  web:\n    image: "+host+"/shop/web:v1\n"), 0o644)

	out, errs, code := pinCLI(t, "pin", "--previous", prev, "--write", compose, "web="+host+"/shop/web:v1", "multi="+host+"/shop/multi:v1")
	if code != ExitOK || strings.Count(out, "@sha256:") != 2 {
		t.Fatalf("pin: exit %d, stdout %q, stderr %s", code, out, errs)
	}
	if got, _ := os.ReadFile(compose); !strings.Contains(string(got), strings.Split(out, "\n")[0]) {
		t.Errorf("compose.yaml not pinned:\n%s", got)
	}
	pushImg(t, host+"/shop/web:v1", image(t, "linux", "amd64", "2"))
	if _, errs, code := pinCLI(t, "pin", "--previous", prev, "web="+host+"/shop/web:v1"); code != ExitMismatch || !strings.Contains(errs, "web") {
		t.Errorf("after the re-push: exit %d, stderr %s; want 1 naming web", code, errs)
	}
	// The compose file pins the old digest: pinning what it names refuses too.
	if _, errs, code := pinCLI(t, "pin", "--write", compose); code != ExitMismatch {
		t.Errorf("pin --write of a file pinning a moved tag: exit %d, %s", code, errs)
	}
}
