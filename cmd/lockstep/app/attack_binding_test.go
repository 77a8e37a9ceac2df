package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/testkit/runningtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
)

// Issue 11's adversarial suite, classes 1 (binding), 2 (platforms), 3
// (real indexes) and 5 (names). Every case drives the real CLI and asserts
// the exit code, the finding kind and that nothing was written where
// something could have been (the trusted state, a --write file).

// attackCase is one attack on a command: args, the exit code and finding
// kind (a decision's kind, or a phrase of stderr) it must produce, and the
// files that must not exist (or not change) afterwards.
type attackCase struct {
	name string
	args []string
	exit int
	// kind is a finding kind of the JSON decision, or, for commands that
	// report none, a phrase stderr must hold.
	kind string
	// unwritten must not exist after the run.
	unwritten []string
	// unchanged must hold the same bytes after the run.
	unchanged []string
}

func runAttacks(t *testing.T, cases []attackCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			before := map[string][]byte{}
			for _, p := range tt.unchanged {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				before[p] = b
			}
			code, out, errs := run(t, tt.args...)
			if code != tt.exit {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.exit, out, errs)
			}
			if !strings.Contains(strings.Join(decisionKinds(out), " ")+" "+errs, tt.kind) {
				t.Errorf("no %q in the decision's kinds %v or stderr:\n%s", tt.kind, decisionKinds(out), errs)
			}
			for _, p := range tt.unwritten {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
			for p, b := range before {
				if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
					t.Errorf("%s was changed", p)
				}
			}
		})
	}
}

// decisionKinds are the finding kinds of a JSON decision on stdout.
func decisionKinds(out string) []string {
	var d struct {
		Findings []struct {
			Kind string `json:"kind"`
		} `json:"findings"`
	}
	if json.Unmarshal([]byte(out), &d) != nil {
		return nil
	}
	var ks []string
	for _, f := range d.Findings {
		ks = append(ks, f.Kind)
	}
	return ks
}

// attack digests of the fixture image: an index of linux/amd64 and
// linux/arm64/v8.
var (
	atkIndex     = manifest.MustParseDigest("sha256:" + strings.Repeat("a1", 32))
	atkAmd64     = manifest.MustParseDigest("sha256:" + strings.Repeat("a2", 32))
	atkAmd64Conf = manifest.MustParseDigest("sha256:" + strings.Repeat("a3", 32))
	atkArm64     = manifest.MustParseDigest("sha256:" + strings.Repeat("a4", 32))
	atkArm64Conf = manifest.MustParseDigest("sha256:" + strings.Repeat("a5", 32))
	atkSingle    = manifest.MustParseDigest("sha256:" + strings.Repeat("a6", 32))
	atkSingleCfg = manifest.MustParseDigest("sha256:" + strings.Repeat("a7", 32))
)

func atkImages() []manifest.Image {
	return []manifest.Image{{
		Name: "web", Ref: "127.0.0.1:5000/store/web:v1", Repository: "127.0.0.1:5000/store/web", Tag: "v1", Digest: atkIndex,
		MediaType: "application/vnd.oci.image.index.v1+json",
		Platforms: []manifest.Platform{
			{OS: "linux", Architecture: "amd64", Digest: atkAmd64, Config: atkAmd64Conf},
			{OS: "linux", Architecture: "arm64", Variant: "v8", Digest: atkArm64, Config: atkArm64Conf},
		},
	}, {
		Name: "worker", Ref: "127.0.0.1:5000/store/worker:v1", Repository: "127.0.0.1:5000/store/worker", Tag: "v1", Digest: atkSingle,
		MediaType: "application/vnd.oci.image.manifest.v1+json",
		Platforms: []manifest.Platform{{OS: "linux", Architecture: "arm64", Digest: atkSingle, Config: atkSingleCfg}},
	}}
}

// atkManifest writes a manifest of release, generation gen, of the
// fixture images (no assets: these cases are about the image and the
// manifest), and returns its path.
func atkManifest(t *testing.T, release string, gen int64) string {
	t.Helper()
	_, raw, err := scenario.Manifest(release, gen, atkImages(), []string{"https://cdn.invalid/static/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("%s-%d.json", release, gen))
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAttackBindingAndPlatforms(t *testing.T) {
	web4, api9, web1 := atkManifest(t, "store-web", 4), atkManifest(t, "store-api", 9), atkManifest(t, "store-web-old", 1)
	msrv := httpFileServer(t, filepath.Dir(api9))
	state := filepath.Join(t.TempDir(), "state")
	webState, apiState := filepath.Join(state, "store-web.state.json"), filepath.Join(state, "store-api.state.json")
	oldState := filepath.Join(state, "store-web-old.state.json")
	admit := func(src []string, extra ...string) []string {
		return append(append([]string{"admit"}, src...), append([]string{"--state-dir", state, "--insecure-allow-unsigned", "--format", "json"}, extra...)...)
	}
	amd := func(d manifest.Digest, extra ...string) []string {
		return append([]string{"--image", "web", "--platform", "linux/amd64", "--running", "digest:" + d.String()}, extra...)
	}
	web := func(release string) []string { return []string{"--manifest", web4, "--release", release} }
	fleetTargets := filepath.Join(t.TempDir(), "fleet.txt")
	os.WriteFile(fleetTargets, []byte("http://127.0.0.1:1/\n"), 0o644)
	fleetReport := filepath.Join(t.TempDir(), "fleet.json")

	// A Docker daemon whose images report their own os/arch.
	docker, _ := runningtest.Docker(t,
		runningtest.Container{ID: strings.Repeat("b1", 32), Name: "arm-says-index", ImageID: atkIndex.String(), OS: "linux", Arch: "arm64", Variant: "v8"},
		runningtest.Container{ID: strings.Repeat("b2", 32), Name: "arm-says-amd-manifest", ImageID: atkAmd64.String(), OS: "linux", Arch: "arm64"},
		runningtest.Container{ID: strings.Repeat("b3", 32), Name: "windows-index", ImageID: atkIndex.String(), OS: "windows", Arch: "amd64"},
		runningtest.Container{ID: strings.Repeat("b5", 32), Name: "good", ImageID: atkAmd64Conf.String(), OS: "linux", Arch: "amd64"},
	)
	t.Setenv("DOCKER_HOST", docker)
	onDocker := func(container string) []string {
		return []string{"--image", "web", "--platform", "linux/amd64", "--running", "docker:" + container}
	}

	runAttacks(t, []attackCase{
		// Class 1: a manifest is accepted only for the release asked for.
		{"class 1/admit: a manifest of another release", admit(web("store-api"), amd(atkIndex)...), 1, "manifest-wrong-release", []string{webState, apiState}, nil},
		{"class 1/admit: the release in another case", admit(web("Store-Web"), amd(atkIndex)...), 2, "--release", []string{webState}, nil},
		{"class 1/admit: a prefix of the release", admit(web("store"), amd(atkIndex)...), 1, "manifest-wrong-release", []string{webState}, nil},
		{"class 1/admit: a longer release name", admit(web("store-web-canary"), amd(atkIndex)...), 1, "manifest-wrong-release", []string{webState}, nil},
		{"class 1/admit: --manifest without --release", admit([]string{"--manifest", web4}, amd(atkIndex)...), 2, "--manifest needs --release", []string{webState}, nil},
		{"class 1/admit: an empty --release", admit(web(""), amd(atkIndex)...), 2, "--manifest needs --release", []string{webState}, nil},
		{"class 1/admit: a release name with a path", admit(web("../store-web"), amd(atkIndex)...), 2, "--release", []string{webState}, nil},
		{"class 1/admit: a release name with a space", admit(web("store-web "), amd(atkIndex)...), 2, "--release", []string{webState}, nil},
		{"class 1/admit: a manifest URL of another release", admit([]string{"--manifest", msrv + "/" + filepath.Base(api9), "--release", "store-web"}, amd(atkIndex)...), 1, "manifest-wrong-release", []string{webState, apiState}, nil},
		{"class 1/admit: another release, dry run", admit(web("store-api"), amd(atkIndex, "--dry-run")...), 1, "manifest-wrong-release", []string{webState, apiState}, nil},
		{"class 1/admit: an old release's manifest under the followed name", admit([]string{"--manifest", web1, "--release", "store-web"}, amd(atkIndex)...), 1, "manifest-wrong-release", []string{webState, oldState}, nil},
		{"class 1/admit: another release that would otherwise match", admit([]string{"--manifest", api9, "--release", "store-web"}, amd(atkAmd64Conf)...), 1, "manifest-wrong-release", []string{webState, apiState}, nil},
		{"class 1/fleet check: a manifest of another release", []string{"fleet", "check", "--insecure-allow-unsigned", "--manifest", api9, "--release", "store-web", "--targets", "file:" + fleetTargets, "--report", fleetReport}, 1, "manifest-wrong-release", []string{fleetReport}, nil},
		{"class 1/fleet check: --manifest without --release", []string{"fleet", "check", "--insecure-allow-unsigned", "--manifest", api9, "--targets", "file:" + fleetTargets, "--report", fleetReport}, 2, "--manifest needs --release", []string{fleetReport}, nil},
		{"class 1/webhook: --manifest without --release", []string{"webhook", "--listen", "127.0.0.1:0", "--tls-cert", "c", "--tls-key", "k", "--manifest", web4, "--insecure-allow-unsigned"}, 2, "--manifest needs --release", nil, nil},
		{"class 1/agent: --manifest without --release", []string{"agent", "--listen", "127.0.0.1:0", "--manifest", web4, "--insecure-allow-unsigned", "--state-dir", state, "--image", "web", "--running", "digest:" + atkIndex.String()}, 2, "--manifest needs --release", []string{webState}, nil},
		{"class 1/cdn check: a manifest of another release", []string{"cdn", "check", "--manifest", api9, "--release", "store-web"}, 1, "manifest-wrong-release", nil, nil},

		// Class 2: an index digest proves the release only on a platform
		// the index holds; the runtime's own os/arch must be the gate's.
		{"class 2/index digest on a platform the index lacks", admit(web("store-web"), "--image", "web", "--platform", "linux/s390x", "--running", "digest:"+atkIndex.String()), 1, "image-digest-mismatch", []string{webState}, nil},
		{"class 2/index digest on windows", admit(web("store-web"), "--image", "web", "--platform", "windows/amd64", "--running", "digest:"+atkIndex.String()), 1, "image-digest-mismatch", []string{webState}, nil},
		{"class 2/index digest on another variant", admit(web("store-web"), "--image", "web", "--platform", "linux/arm64/v7", "--running", "digest:"+atkIndex.String()), 1, "image-digest-mismatch", []string{webState}, nil},
		{"class 2/index digest on arm (not arm64)", admit(web("store-web"), "--image", "web", "--platform", "linux/arm", "--running", "digest:"+atkIndex.String()), 1, "image-digest-mismatch", []string{webState}, nil},
		{"class 2/another platform's config digest", admit(web("store-web"), amd(atkArm64Conf)...), 1, "image-digest-mismatch", []string{webState}, nil},
		{"class 2/another platform's manifest digest", admit(web("store-web"), amd(atkArm64)...), 1, "image-digest-mismatch", []string{webState}, nil},
		{"class 2/a single-platform image on another platform", admit(web("store-web"), "--image", "worker", "--platform", "linux/amd64", "--running", "digest:"+atkSingle.String()), 1, "image-digest-mismatch", []string{webState}, nil},
		{"class 2/a single-platform config on another platform", admit(web("store-web"), "--image", "worker", "--platform", "linux/amd64", "--running", "digest:"+atkSingleCfg.String()), 1, "image-digest-mismatch", []string{webState}, nil},
		{"class 2/docker: the index, but the image is arm64", admit(web("store-web"), onDocker("arm-says-index")...), 1, "image-digest-mismatch", []string{webState}, nil},
		{"class 2/docker: amd64's manifest, but the image is arm64", admit(web("store-web"), onDocker("arm-says-amd-manifest")...), 1, "image-digest-mismatch", []string{webState}, nil},
		{"class 2/docker: the index, but the image is windows", admit(web("store-web"), onDocker("windows-index")...), 1, "image-digest-mismatch", []string{webState}, nil},
	})

	// A store whose production channel of store-web was replaced by
	// another channel's or another release's pointer: the store refuses
	// it as damaged (could not verify), never as the release asked for.
	st := filepath.Join(t.TempDir(), "store")
	for _, p := range [][]string{{"--channel", "staging", web4}, {api9}} {
		if code, out, errs := run(t, append([]string{"publish", "--allow-unsigned", "--store", "file://" + st}, p...)...); code != 0 {
			t.Fatalf("publish %v: exit %d\n%s\n%s", p, code, out, errs)
		}
	}
	production := filepath.Join(st, "store-web", "channels", "production.json")
	copyFile := func(from, to string) func() {
		return func() {
			b, err := os.ReadFile(from)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(to, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	fromStore := admit([]string{"--store", "file://" + st, "--release", "store-web", "--channel", "production"}, amd(atkIndex)...)
	for _, c := range []struct {
		name  string
		setup func()
		want  string
	}{
		{"class 1/store: the staging pointer copied to production", copyFile(filepath.Join(st, "store-web", "channels", "staging.json"), production), `pointer names channel \"staging\"`},
		{"class 1/store: another release's pointer copied in", copyFile(filepath.Join(st, "store-api", "channels", "production.json"), production), `pointer names release \"store-api\"`},
	} {
		c.setup()
		runAttacks(t, []attackCase{{c.name, fromStore, 3, "dependency-unreachable", []string{webState, apiState}, nil}})
		if _, out, _ := run(t, fromStore...); !strings.Contains(out, c.want) {
			t.Errorf("%s: the decision does not say %s:\n%s", c.name, c.want, out)
		}
	}

	// The controls: what the attacks imitate is admitted, and only then
	// is the state written.
	for _, ok := range [][]string{amd(atkIndex), onDocker("good")} {
		if code, out, errs := run(t, admit(web("store-web"), ok...)...); code != 0 {
			t.Fatalf("control %v: exit %d\n%s\n%s", ok, code, out, errs)
		}
	}
	if _, err := os.Stat(webState); err != nil {
		t.Fatalf("the admitted control wrote no state: %v", err)
	}
	// The trusted state cannot be sidestepped by another release's name.
	runAttacks(t, []attackCase{
		{"class 1/admit: a generation-1 manifest of another release after generation 4", admit([]string{"--manifest", web1, "--release", "store-web"}, amd(atkIndex)...), 1, "manifest-wrong-release", []string{oldState}, []string{webState}},
		{"class 1/admit: a rollback under the followed name", admit([]string{"--manifest", atkManifest(t, "store-web", 3), "--release", "store-web"}, amd(atkIndex)...), 1, "manifest-rollback", nil, []string{webState}},
	})
}

// httpFileServer serves dir on a loopback port and returns its URL.
func httpFileServer(t *testing.T, dir string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir))}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestAttackRealIndexes pins indexes as real tools write them, from
// Debian's docker-registry: crane index append (v0.21+), entries with an
// artifactType, attestations, artifacts and nested indexes.
func TestAttackRealIndexes(t *testing.T) {
	t.Parallel()
	host := testenv.Registry(t)
	crane := craneBin(t)
	pushImg(t, host+"/shop/web:amd64", image(t, "linux", "amd64", "1"))
	pushImg(t, host+"/shop/web:arm64", image(t, "linux", "arm64", "1"))
	craneRun(t, crane, "mutate", host+"/shop/web:arm64", "--set-platform", "linux/arm64/v8", "-t", host+"/shop/web:arm64")
	craneRun(t, crane, "index", "append", "-m", host+"/shop/web:amd64", "-m", host+"/shop/web:arm64", "-t", host+"/shop/web:crane")

	amd, arm := image(t, "linux", "amd64", "1"), image(t, "linux", "arm64", "1")
	plat := func(os, arch, variant string) *v1.Platform {
		return &v1.Platform{OS: os, Architecture: arch, Variant: variant}
	}
	artifact := mutate.MediaType(mutate.ConfigMediaType(empty.Image, "application/vnd.example.sbom.v1+json"), types.OCIManifestSchema1)
	pushIndex(t, host+"/shop/web:artifact-type",
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: plat("linux", "amd64", ""), ArtifactType: "application/vnd.oci.image.config.v1+json"}},
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: plat("linux", "arm64", "v8"), ArtifactType: "application/vnd.oci.image.config.v1+json"}})
	pushIndex(t, host+"/shop/web:no-platform", mutate.IndexAddendum{Add: amd})
	pushIndex(t, host+"/shop/web:attestations-only",
		mutate.IndexAddendum{Add: image(t, "unknown", "unknown", "att"), Descriptor: v1.Descriptor{Platform: plat("unknown", "unknown", ""),
			Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest"}}})
	pushIndex(t, host+"/shop/web:annotated-attestation",
		mutate.IndexAddendum{Add: image(t, "linux", "amd64", "att"), Descriptor: v1.Descriptor{Platform: plat("linux", "amd64", ""),
			Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest"}}})
	pushIndex(t, host+"/shop/web:artifact-only",
		mutate.IndexAddendum{Add: artifact, Descriptor: v1.Descriptor{Platform: plat("linux", "amd64", ""), ArtifactType: "application/vnd.example.sbom.v1+json"}})
	inner := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: plat("linux", "amd64", "")}}), types.OCIImageIndex)
	pushIndex(t, host+"/shop/web:nested", mutate.IndexAddendum{Add: inner, Descriptor: v1.Descriptor{Platform: plat("linux", "amd64", "")}})
	pushIndex(t, host+"/shop/web:nested-no-platform", mutate.IndexAddendum{Add: inner},
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: plat("linux", "arm64", "v8")}})

	// Every spec-valid index of images pins, with its platforms.
	for tag, want := range map[string]string{"crane": "linux/amd64 linux/arm64/v8", "artifact-type": "linux/amd64 linux/arm64/v8", "no-platform": "linux/amd64"} {
		out, errs, code := pinCLI(t, "pin", "--format", "json", "web="+host+"/shop/web:"+tag)
		if code != 0 {
			t.Errorf("class 3/pin %s: exit %d\n%s", tag, code, errs)
			continue
		}
		if got := strings.Join(pinnedPlatforms(t, out), " "); got != want {
			t.Errorf("class 3/pin %s: platforms %q, want %q", tag, got, want)
		}
	}

	dir := t.TempDir()
	compose := filepath.Join(dir, "compose.yaml")
	pin := func(tag string, extra ...string) []string {
		os.WriteFile(compose, []byte("services:\n  web:\n    image: "+host+"/shop/web:"+tag+"\n"), 0o644)
		return append([]string{"pin", "--write", compose}, extra...)
	}
	cases := []attackCase{}
	for _, c := range []struct {
		tag, platform, kind string
	}{
		{"crane", "linux/s390x", "no image for platform linux/s390x"},
		{"crane", "windows/amd64", "no image for platform windows/amd64"},
		{"artifact-type", "linux/arm64/v7", "no image for platform linux/arm64/v7"},
		{"attestations-only", "", "the index holds no image manifest"},
		{"annotated-attestation", "", "the index holds no image manifest"},
		{"artifact-only", "", "the index holds no image manifest"},
		{"nested", "", "nested index"},
		{"nested-no-platform", "", "nested index"},
		{"nested", "linux/amd64", "nested index"},
	} {
		args := []string{}
		if c.platform != "" {
			args = append(args, "--platform", c.platform)
		}
		cases = append(cases, attackCase{name: fmt.Sprintf("class 3/pin %s %s", c.tag, c.platform), exit: 2, kind: c.kind})
		i := len(cases) - 1
		t.Run(cases[i].name, func(t *testing.T) {
			a := pin(c.tag, args...)
			cases[i].args, cases[i].unchanged = a, []string{compose}
			runAttacks(t, cases[i:])
		})
	}
}

func pinnedPlatforms(t *testing.T, out string) []string {
	t.Helper()
	var res struct {
		Images []manifest.Image `json:"images"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Images) != 1 {
		var ims []manifest.Image
		if err2 := json.Unmarshal([]byte(out), &ims); err2 != nil || len(ims) != 1 {
			t.Fatalf("pin output %q: %v", out, err)
		}
		res.Images = ims
	}
	var ps []string
	for _, p := range res.Images[0].Platforms {
		ps = append(ps, p.String())
	}
	return ps
}

func pushIndex(t *testing.T, ref string, adds ...mutate.IndexAddendum) {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(tag, mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex)); err != nil {
		t.Fatal(err)
	}
}

// craneBin is the crane CLI (v0.21 or later: .cache/bin/crane, or PATH).
func craneBin(t *testing.T) string {
	t.Helper()
	if p, err := filepath.Abs(filepath.Join("..", "..", "..", ".cache", "bin", "crane")); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return testenv.Require(t, "crane")
}

func craneRun(t *testing.T, crane string, args ...string) {
	t.Helper()
	out, err := exec.Command(crane, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("crane %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
