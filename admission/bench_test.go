package admission_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/admission/running"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
	"github.com/lockstep-dev/lockstep/internal/testkit/runningtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/sigtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

// BenchmarkAdmit is the boot gate on a manifest of 500 assets, 50 of them
// served by the probed page, against loopback nginx (CDN and app) and a
// fake Docker daemon on a unix socket. It reports p50 and p99 latency and
// the requests sent per check; bench/admit.sh runs it over 100 checks.
//
//	in-process: admission.Check, as the agent calls it
//	cli:        the lockstep binary, process start included, as a boot hook runs it
//
// each of an unsigned manifest (--insecure-allow-unsigned) and, as
// -signed, of the same manifest signed with a key (--key: the signature
// verified, as a real gate does).
func BenchmarkAdmit(b *testing.B) {
	files := scenario.Assets("bench", 500)
	cdnDir := b.TempDir()
	if err := scenario.WriteFiles(cdnDir, files); err != nil {
		b.Fatal(err)
	}
	cdn := testenv.Nginx(b, cdnDir) + "/"
	served := scenario.Paths(files)[:50]
	appDir := b.TempDir()
	if err := os.WriteFile(filepath.Join(appDir, "index.html"), []byte(scenario.Page(cdn, served)), 0o644); err != nil {
		b.Fatal(err)
	}
	app := testenv.Nginx(b, appDir) + "/"
	config := "sha256:" + strings.Repeat("3", 64)
	md := manifest.MustParseDigest("sha256:" + strings.Repeat("2", 64))
	im := manifest.Image{Name: "web", Ref: "127.0.0.1:5000/web:v1", Repository: "127.0.0.1:5000/web", Digest: md,
		MediaType: "application/vnd.oci.image.manifest.v1+json",
		Platforms: []manifest.Platform{{OS: "linux", Architecture: "amd64", Digest: md, Config: manifest.MustParseDigest(config)}}}
	_, raw, err := scenario.Manifest("store-web", 1, []manifest.Image{im}, []string{cdn}, files)
	if err != nil {
		b.Fatal(err)
	}
	mpath := filepath.Join(b.TempDir(), "release.json")
	if err := os.WriteFile(mpath, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	// The same manifest, keyed-signed (MANIFEST.sig beside it, as `lockstep
	// sign --key` writes it), for the -signed variants: a real gate
	// verifies a signature.
	sv := sigtest.Key(b)
	sig, err := signature.Sign(context.Background(), sv, raw, signature.SignOptions{})
	if err != nil {
		b.Fatal(err)
	}
	spath := filepath.Join(b.TempDir(), "release.json")
	keyPath := filepath.Join(filepath.Dir(spath), "cosign.pub")
	for p, data := range map[string][]byte{spath: raw, spath + signature.SignatureSuffix: sig.Base64, keyPath: sigtest.PublicPEM(b, sv)} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	verifier, err := signature.NewVerifier(signature.Options{Key: sv})
	if err != nil {
		b.Fatal(err)
	}
	host, dockerReqs := runningtest.Docker(b, runningtest.Container{ID: strings.Repeat("ab", 32), Name: "web", Reference: im.Ref,
		ImageID: config, RepoDigests: []string{im.Repository + "@" + md.String()}, OS: "linux", Arch: "amd64"})

	inProcess := func(b *testing.B, path string, v manifest.Verifier) {
		src, err := running.Parse("docker:web", running.Options{DockerHost: host})
		if err != nil {
			b.Fatal(err)
		}
		var lat []time.Duration
		var reqs int64
		before := dockerReqs.Load()
		b.ResetTimer()
		for b.Loop() {
			// A fresh client each check, as on a booting instance: no warm
			// connections.
			start := time.Now()
			d := admission.Check(context.Background(), admission.Config{
				CDN:    cdngate.Checker{},
				Source: manifest.FileSource{Path: path}, Verifier: v, AllowUnsigned: v == nil, Image: "web", Running: src,
				Platform: "linux/amd64", Probes: []string{app}, Client: transport.New(transport.DefaultPolicy()),
			})
			lat = append(lat, time.Since(start))
			if !d.Allowed || d.CDNChecked != 50 || d.Unsigned != (v == nil) {
				b.Fatalf("Allowed %v, CDNChecked %d, Unsigned %v:\n%s", d.Allowed, d.CDNChecked, d.Unsigned, dump(d))
			}
			reqs += d.Requests
		}
		report(b, lat, float64(reqs+dockerReqs.Load()-before))
	}
	b.Run("in-process", func(b *testing.B) { inProcess(b, mpath, nil) })
	b.Run("in-process-signed", func(b *testing.B) { inProcess(b, spath, verifier) })

	// cli runs the lockstep binary (LOCKSTEP_BIN, else a fresh build) with
	// trust, the flags that say whom to trust.
	cli := func(b *testing.B, path string, trust ...string) {
		// bench/run.sh builds the binary once for every benchmark.
		bin := os.Getenv("LOCKSTEP_BIN")
		if bin == "" {
			bin = filepath.Join(b.TempDir(), "lockstep")
			if out, err := exec.Command("go", "build", "-o", bin, "github.com/lockstep-dev/lockstep/cmd/lockstep").CombinedOutput(); err != nil {
				b.Fatalf("building lockstep: %v\n%s", err, out)
			}
		}
		stateDir := filepath.Join(b.TempDir(), "state")
		var lat []time.Duration
		var reqs int64
		before := dockerReqs.Load()
		b.ResetTimer()
		for b.Loop() {
			cmd := exec.Command(bin, append(append([]string{"admit", "--manifest", path, "--release", "store-web"}, trust...), "--image", "web",
				"--running", "docker:web", "--platform", "linux/amd64", "--probe", app, "--format", "json")...)
			cmd.Env = append(os.Environ(), "DOCKER_HOST="+host, "LOCKSTEP_STATE_DIR="+stateDir)
			start := time.Now()
			out, err := cmd.Output()
			lat = append(lat, time.Since(start))
			if err != nil {
				b.Fatalf("lockstep admit: %v\n%s", err, out)
			}
			var d admission.Decision
			if err := json.Unmarshal(out, &d); err != nil || !d.Allowed || d.Unsigned != (trust[0] != "--key") {
				b.Fatalf("lockstep admit: %v\n%s", err, out)
			}
			reqs += d.Requests
		}
		report(b, lat, float64(reqs+dockerReqs.Load()-before))
	}
	b.Run("cli", func(b *testing.B) { cli(b, mpath, "--insecure-allow-unsigned") })
	b.Run("cli-signed", func(b *testing.B) { cli(b, spath, "--key", keyPath) })
}

func report(b *testing.B, lat []time.Duration, requests float64) {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(requests/float64(len(lat)), "requests/check")
}
