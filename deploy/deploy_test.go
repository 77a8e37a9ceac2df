// Package deploy_test runs the deploy/ hook script against a built
// lockstep, so that the files in deploy/ stay true.
package deploy_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
)

func TestHookScript(t *testing.T) {
	dir := t.TempDir()
	bin := testenv.Lockstep(t)
	files := scenario.Assets("v1", 2)
	cdnDir := filepath.Join(dir, "cdn")
	if err := scenario.WriteFiles(cdnDir, files); err != nil {
		t.Fatal(err)
	}
	cdn := httptest.NewServer(http.FileServer(http.Dir(cdnDir)))
	defer cdn.Close()
	page := scenario.Page(cdn.URL, scenario.Paths(files))
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(page)) }))
	defer app.Close()
	d := func(c string) manifest.Digest { return manifest.MustParseDigest("sha256:" + strings.Repeat(c, 64)) }
	im := manifest.Image{Name: "web", Ref: "r/web:v1", Repository: "r/web", Digest: d("1"), MediaType: "application/vnd.oci.image.manifest.v1+json",
		Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: d("1"), Config: d("3")}}}
	_, raw, err := scenario.Manifest("store-web", 1, []manifest.Image{im}, []string{cdn.URL + "/"}, files)
	if err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(dir, "release.json")
	os.WriteFile(mpath, raw, 0o644)
	envFile := filepath.Join(dir, "admit.env")
	os.WriteFile(envFile, []byte("LOCKSTEP_MANIFEST="+mpath+"\nLOCKSTEP_RELEASE=store-web\nLOCKSTEP_IMAGE=web\nLOCKSTEP_PROBE="+app.URL+"/\n"), 0o644)

	for _, tt := range []struct {
		running string
		code    int
	}{{"digest:" + d("3").String(), 0}, {"digest:" + d("9").String(), 1}, {"digest:r/web:v1", 1}} {
		report := filepath.Join(dir, "run", tt.running[len(tt.running)-4:], "admit.json")
		cmd := exec.Command("sh", "hooks/lockstep-admit.sh", "--insecure-allow-unsigned", "--platform", "linux/amd64")
		cmd.Env = append(os.Environ(), "LOCKSTEP_BIN="+bin, "LOCKSTEP_ENV_FILE="+envFile, "LOCKSTEP_REPORT="+report, "LOCKSTEP_RUNNING="+tt.running,
			"LOCKSTEP_STATE_DIR="+filepath.Join(dir, "state"))
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.code {
			t.Errorf("--running %s: exit %d, want %d\n%s", tt.running, code, tt.code, out)
		}
		b, err := os.ReadFile(report)
		var dec admission.Decision
		if err != nil || json.Unmarshal(b, &dec) != nil || dec.Allowed != (tt.code == 0) {
			t.Errorf("--running %s: report %s: %v %s", tt.running, report, err, b)
		}
	}
}
