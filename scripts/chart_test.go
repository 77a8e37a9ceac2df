package scripts

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
)

// requireHelm returns helm where scripts/chart-package.sh looks for it
// (.cache/bin, or PATH), or skips the test (fails it under
// LOCKSTEP_INTEGRATION=1).
func requireHelm(t *testing.T) string {
	t.Helper()
	if p, err := filepath.Abs("../.cache/bin/helm"); err == nil && isExecutable(p) {
		return p
	}
	return testenv.Require(t, "helm")
}

// chartPackage runs scripts/chart-package.sh TAG DIGEST OUT with a HOME of
// its own; it returns stdout, stderr and the exit code.
func chartPackage(t *testing.T, tag, digest, out string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("bash", "chart-package.sh", tag, digest, out)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return stdout.String(), stderr.String(), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}

// TestChartPackage packages the chart as the release workflow does and
// reads the package back: the tag's version and appVersion, the image
// pinned by the digest given, the tree left as it was; a tag or digest
// that is not one is refused before anything is written.
func TestChartPackage(t *testing.T) {
	helm := requireHelm(t)
	const digest = "sha256:1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef"
	values := filepath.Join("..", "deploy", "helm", "lockstep", "values.yaml")
	before, err := os.ReadFile(values)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	stdout, stderr, code := chartPackage(t, "v1.2.3-rc.1", digest, out)
	if code != 0 {
		t.Fatalf("chart-package.sh: exit %d\n%s", code, stderr)
	}
	tgz := strings.TrimSpace(stdout)
	if tgz != filepath.Join(out, "lockstep-1.2.3-rc.1.tgz") {
		t.Fatalf("chart-package.sh printed %q, want %s", tgz, filepath.Join(out, "lockstep-1.2.3-rc.1.tgz"))
	}
	if after, _ := os.ReadFile(values); !bytes.Equal(before, after) {
		t.Error("chart-package.sh changed deploy/helm/lockstep/values.yaml; it must package a copy")
	}
	dir := extractTarGz(t, tgz)
	var chart struct {
		Name       string `yaml:"name"`
		Version    string `yaml:"version"`
		AppVersion string `yaml:"appVersion"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "lockstep", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &chart); err != nil {
		t.Fatal(err)
	}
	if chart.Name != "lockstep" || chart.Version != "1.2.3-rc.1" || chart.AppVersion != "v1.2.3-rc.1" {
		t.Errorf("Chart.yaml: name %q version %q appVersion %q, want lockstep 1.2.3-rc.1 v1.2.3-rc.1", chart.Name, chart.Version, chart.AppVersion)
	}
	var v struct {
		Image struct{ Repository, Tag, Digest string } `yaml:"image"`
	}
	raw, err = os.ReadFile(filepath.Join(dir, "lockstep", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if v.Image.Digest != digest || v.Image.Tag != "" {
		t.Errorf("the packaged values: image.tag %q image.digest %q, want the appVersion and %s", v.Image.Tag, v.Image.Digest, digest)
	}
	for _, f := range []string{"values.schema.json", "README.md", "templates/deployment.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, "lockstep", f)); err != nil {
			t.Errorf("the package lacks %s: %v", f, err)
		}
	}

	// What the package installs: the released image, by digest.
	cmd := exec.Command(helm, "template", "lockstep", tgz, "-n", "lockstep", "--kube-version", "1.30.0",
		"-f", filepath.Join("..", "deploy", "helm", "testdata", "kustomize-values.yaml"))
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	rendered, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template %s: %v", tgz, err)
	}
	images := regexp.MustCompile(`(?m)^\s+image: "?([^"\s]+)"?$`).FindAllSubmatch(rendered, -1)
	want := "ghcr.io/lockstep-dev/lockstep:v1.2.3-rc.1@" + digest
	if len(images) != 1 || string(images[0][1]) != want {
		t.Errorf("the packaged chart runs %q, want exactly %s", images, want)
	}

	for _, bad := range []struct{ tag, digest, why string }{
		{"1.2.3", digest, "no v"},
		{"v1.2", digest, "not MAJOR.MINOR.PATCH"},
		{"main", digest, "a branch"},
		{"v1.2.3;touch pwned", digest, "a shell word"},
		{"v1.2.3\n", digest, "a newline"},
		{"v01.2.3", digest, "a leading zero"},
		{"v1.2.3", "sha256:abc", "a short digest"},
		{"v1.2.3", "latest", "a tag for a digest"},
		{"v1.2.3", "", "no digest"},
		{"v1.2.3", strings.ToUpper(digest), "upper case"},
	} {
		out := t.TempDir()
		_, stderr, code := chartPackage(t, bad.tag, bad.digest, out)
		entries, _ := os.ReadDir(out)
		if code != 2 || len(entries) != 0 {
			t.Errorf("%s: chart-package.sh %q %q: exit %d, %d files written; want exit 2 and nothing\n%s", bad.why, bad.tag, bad.digest, code, len(entries), stderr)
		}
	}
}

// step is one step of a workflow job.
type step struct {
	ID   string            `yaml:"id"`
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

// TestReleaseWorkflowPublishesTheChart reads .github/workflows/release.yml
// (nothing here can run it: it needs the workflow's OIDC identity and
// ghcr.io): the chart is packaged by scripts/chart-package.sh from the tag
// and the digest of the image pushed, after that image is signed; pushed to
// ghcr.io as an OCI artifact; signed keyless by the digest pushed, never by
// a tag; attested; with helm from install-release-tools.sh at the version
// the tests use; and every action pinned to a release.
func TestReleaseWorkflowPublishesTheChart(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Env  map[string]string `yaml:"env"`
		Jobs map[string]struct {
			Permissions map[string]string `yaml:"permissions"`
			Steps       []step            `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		t.Fatal(err)
	}
	job, ok := wf.Jobs["release"]
	if !ok {
		t.Fatal("release.yml has no release job")
	}
	if job.Permissions["packages"] != "write" || job.Permissions["id-token"] != "write" {
		t.Errorf("permissions %v: the chart's push needs packages: write, its keyless signature id-token: write", job.Permissions)
	}
	if wf.Env["CHARTS"] != "ghcr.io/lockstep-dev/charts" {
		t.Errorf("env CHARTS = %q, want ghcr.io/lockstep-dev/charts (the docs' oci:// address)", wf.Env["CHARTS"])
	}
	index := func(match func(step) bool) int {
		return slices.IndexFunc(job.Steps, match)
	}
	tools := index(func(s step) bool { return strings.Contains(s.Run, "scripts/install-release-tools.sh") })
	image := index(func(s step) bool { return s.ID == "image" })
	imageSigned := index(func(s step) bool {
		return strings.Contains(s.Run, `cosign sign --yes "${{ steps.image.outputs.ref }}"`)
	})
	chart := index(func(s step) bool { return s.ID == "chart" })
	signed := index(func(s step) bool {
		return s.Run != "" && strings.Contains(s.Run, "cosign sign") && strings.Contains(s.Run, "steps.chart.outputs.ref")
	})
	attested := index(func(s step) bool {
		return strings.HasPrefix(s.Uses, "actions/attest-build-provenance@") && s.With["subject-digest"] == "${{ steps.chart.outputs.digest }}"
	})
	for what, i := range map[string]int{"install-release-tools.sh": tools, "the image": image, "the image's signature": imageSigned,
		"the chart (id: chart)": chart, "cosign sign of steps.chart.outputs.ref": signed, "the chart's provenance": attested} {
		if i < 0 {
			t.Errorf("release.yml has no step for %s", what)
		}
	}
	if t.Failed() {
		return
	}
	if !(tools < chart && image < chart && imageSigned < chart && chart < signed && chart < attested) {
		t.Errorf("steps in the order tools %d, image %d, image signed %d, chart %d, chart signed %d, attested %d: the chart comes after helm is installed and the image it pins is pushed and signed, and is signed after it is pushed",
			tools, image, imageSigned, chart, signed, attested)
	}
	run := job.Steps[chart].Run
	for _, want := range []string{
		`scripts/chart-package.sh "$GITHUB_REF_NAME" "${{ steps.image.outputs.digest }}"`,
		`helm push "$tgz" "oci://$CHARTS"`,
		`echo "ref=$CHARTS/lockstep@$digest"`,
		"test -n \"$digest\"",
	} {
		if !strings.Contains(run, want) {
			t.Errorf("the chart step does not run %s:\n%s", want, run)
		}
	}
	if sig := job.Steps[signed].Run; !strings.Contains(sig, "--yes") || strings.Contains(sig, "--key") {
		t.Errorf("the chart is signed with %q, want keyless (cosign sign --yes, no --key)", sig)
	}
	if a := job.Steps[attested].With; a["subject-name"] != "${{ env.CHARTS }}/lockstep" || a["push-to-registry"] != "true" {
		t.Errorf("the chart's attestation: %v", a)
	}

	// Every action is pinned to a release (a tag or a commit), never a branch.
	for _, s := range job.Steps {
		if s.Uses == "" {
			continue
		}
		_, ref, _ := strings.Cut(s.Uses, "@")
		if !regexp.MustCompile(`^(v\d+(\.\d+){0,2}|[0-9a-f]{40})$`).MatchString(ref) {
			t.Errorf("%s is not pinned to a release", s.Uses)
		}
	}

	// helm: one pinned version, built from the Go module proxy by both the
	// tests' install-deps.sh and the release's install-release-tools.sh.
	lib, err := os.ReadFile(filepath.Join("lib", "tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^HELM_VERSION=v\d+\.\d+\.\d+$`).Match(lib) {
		t.Error("scripts/lib/tools.sh does not pin HELM_VERSION=vX.Y.Z")
	}
	for _, script := range []string{"install-deps.sh", "install-release-tools.sh"} {
		b, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(`gotool helm helm.sh/helm/v4 "$HELM_VERSION" cmd/helm`)) {
			t.Errorf("scripts/%s does not build helm at $HELM_VERSION", script)
		}
	}
}
