package scripts

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lockstep-dev/lockstep/internal/testenv"
)

// The snapshot release that scripts/release-snapshot.sh builds (the test
// command runs it first, only when its inputs changed).
const dist = "../dist"

// snapshot is what the tests read of dist/.
type snapshot struct {
	Version, Commit string
	sums            map[string]string // checksums.txt: file name → SHA-256
	// targets are the platforms built ("linux/amd64"), from dist/.targets:
	// the host's alone by default, the whole matrix with
	// scripts/release-snapshot.sh --all.
	targets []string
}

// fullMatrix is every platform .goreleaser.yaml builds.
var fullMatrix = []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"}

// loadSnapshot reads dist/metadata.json and dist/checksums.txt, or skips
// the test (fails it under LOCKSTEP_TEST_RELEASE=1, set by scripts/test.sh unless LOCKSTEP_TEST_RELEASE=0) when there is no
// snapshot release.
func loadSnapshot(t *testing.T) snapshot {
	t.Helper()
	if os.Getenv("LOCKSTEP_TEST_RELEASE") != "1" {
		t.Skip("reads the snapshot release: scripts/test.sh builds and checks it (LOCKSTEP_TEST_RELEASE=1)")
	}
	raw, err := os.ReadFile(filepath.Join(dist, "metadata.json"))
	if err != nil {
		if os.Getenv("LOCKSTEP_TEST_RELEASE") == "1" {
			t.Fatalf("no snapshot release in dist/ (scripts/release-snapshot.sh builds it): %v", err)
		}
		t.Skipf("no snapshot release in dist/; run scripts/release-snapshot.sh: %v", err)
	}
	var s snapshot
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("dist/metadata.json: %v", err)
	}
	if s.Version == "" || len(s.Commit) != 40 {
		t.Fatalf("dist/metadata.json names version %q commit %q", s.Version, s.Commit)
	}
	rawTargets, err := os.ReadFile(filepath.Join(dist, ".targets"))
	if err != nil {
		t.Fatalf("dist/.targets (written by scripts/release-snapshot.sh; run it again): %v", err)
	}
	s.targets = strings.Fields(string(rawTargets))
	host := runtime.GOOS + "/" + runtime.GOARCH
	if !slices.Contains(s.targets, host) {
		t.Fatalf("the snapshot in dist/ was built for %v, not for this host (%s): run scripts/release-snapshot.sh", s.targets, host)
	}
	for _, p := range s.targets {
		if !slices.Contains(fullMatrix, p) {
			t.Fatalf("dist/.targets names %s, which .goreleaser.yaml does not build", p)
		}
	}
	if os.Getenv("LOCKSTEP_TEST_RELEASE_ALL") == "1" && len(s.targets) != len(fullMatrix) {
		t.Fatalf("LOCKSTEP_TEST_RELEASE_ALL=1, but dist/ holds %v: run scripts/release-snapshot.sh --all", s.targets)
	}
	f, err := os.Open(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s.sums = map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("checksums.txt line %q", sc.Text())
		}
		s.sums[name] = sum
	}
	return s
}

func (s snapshot) archive(goos, goarch string) string {
	return fmt.Sprintf("lockstep_%s_%s_%s.tar.gz", s.Version, goos, goarch)
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(raw)
	return hex.EncodeToString(h[:])
}

// gunzipSHA256 is the SHA-256 of a gzipped file's content.
func gunzipSHA256(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, zr); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// extract returns the named file of a .tar.gz archive.
func extract(t *testing.T, archive, name string) []byte {
	t.Helper()
	var got []byte
	walkTarGz(t, archive, func(h *tar.Header, body []byte) bool {
		if h.Name == name {
			got = body
			return false
		}
		return true
	})
	if got == nil {
		t.Fatalf("%s holds no %s", archive, name)
	}
	return got
}

// walkTarGz calls fn with every entry of a .tar.gz archive (the body of a
// regular file, nil for any other), until fn returns false.
func walkTarGz(t *testing.T, archive string, fn func(h *tar.Header, body []byte) bool) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gunzip(t, archive, f, func(r io.Reader) { walkTar(t, archive, r, fn) })
}

// gunzip calls read with the gzip stream r decompressed by the system's
// gzip -d (as a user's tar -xzf does it), and fails the test if gzip
// finds the stream bad. Go's compress/flate runs under the race detector
// in these tests: a release archive took it 20 s of CPU to read at load
// 10, gzip -d 4 s.
func gunzip(t *testing.T, what string, r io.Reader, read func(io.Reader)) {
	t.Helper()
	cmd := exec.Command(testenv.Require(t, "gzip"), "-dc")
	cmd.Stdin = r
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("gzip -d %s: %v", what, err)
	}
	defer func() {
		if cmd.ProcessState == nil { // read failed the test
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	read(out)
	// What read left unread, to the end: gzip then checks the whole
	// stream (its trailer's CRC and length) and exits.
	if _, err := io.Copy(io.Discard, out); err != nil {
		t.Fatalf("gzip -d %s: %v", what, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("gzip -d %s: %v\n%s", what, err, stderr.String())
	}
}

// walkTar is walkTarGz over an uncompressed tar stream. Each body is read
// into a buffer of its size: growing one by doubling to a binary's size
// took seconds under the race detector.
func walkTar(t *testing.T, archive string, r io.Reader, fn func(h *tar.Header, body []byte) bool) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		var body []byte
		if h.Typeflag == tar.TypeReg {
			if h.Size < 0 || h.Size > 1<<30 {
				t.Fatalf("%s: %s is %d bytes", archive, h.Name, h.Size)
			}
			body = make([]byte, h.Size)
			if _, err := io.ReadFull(tr, body); err != nil {
				t.Fatalf("%s: %s: %v", archive, h.Name, err)
			}
		}
		if !fn(h, body) {
			return
		}
	}
}

// versionOf runs bin version --format json.
func versionOf(t *testing.T, bin string) buildVersion {
	t.Helper()
	out, err := exec.Command(bin, "version", "--format", "json").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	var v buildVersion
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s version --format json = %q: %v", bin, out, err)
	}
	return v
}

type buildVersion struct {
	Version, Commit, Date, GoVersion, Platform string
	Release, Snapshot                          bool
}

func TestSnapshotRelease(t *testing.T) {
	t.Parallel()
	s := loadSnapshot(t)

	t.Run("every archive, its checksum and its SBOM", func(t *testing.T) {
		var archives, debs int
		for name := range s.sums {
			switch {
			case strings.HasSuffix(name, ".tar.gz"):
				archives++
			case strings.HasSuffix(name, ".deb"):
				debs++
			}
		}
		if archives != len(s.targets) {
			t.Errorf("checksums.txt names %d archives, want one for each of %v", archives, s.targets)
		}
		for _, target := range s.targets {
			{
				goos, goarch, _ := strings.Cut(target, "/")
				a := s.archive(goos, goarch)
				want, ok := s.sums[a]
				if !ok {
					t.Errorf("checksums.txt names no %s", a)
					continue
				}
				if got := fileSHA256(t, filepath.Join(dist, a)); got != want {
					t.Errorf("%s has SHA-256 %s, checksums.txt says %s", a, got, want)
				}
				man, err := os.ReadFile("../docs/man/lockstep.1")
				if err != nil {
					t.Fatal(err)
				}
				if got := extract(t, filepath.Join(dist, a), "man/man1/lockstep.1"); !bytes.Equal(got, man) {
					t.Errorf("%s's man/man1/lockstep.1 differs from docs/man/lockstep.1", a)
				}
				env, err := os.ReadFile("../deploy/packaging/admit.env")
				if err != nil {
					t.Fatal(err)
				}
				if got := extract(t, filepath.Join(dist, a), "systemd/admit.env"); !bytes.Equal(got, env) {
					t.Errorf("%s's systemd/admit.env differs from deploy/packaging/admit.env", a)
				}
				var bom struct {
					BOMFormat  string `json:"bomFormat"`
					Components []struct {
						Name, Version string
					} `json:"components"`
				}
				raw, err := os.ReadFile(filepath.Join(dist, a+".cdx.json"))
				if err != nil {
					t.Errorf("no SBOM for %s: %v", a, err)
					continue
				}
				if err := json.Unmarshal(raw, &bom); err != nil || bom.BOMFormat != "CycloneDX" {
					t.Errorf("%s.cdx.json is not a CycloneDX document (%v)", a, err)
				}
				if !hasComponent(bom.Components, "github.com/urfave/cli/v2") {
					t.Errorf("%s.cdx.json does not list the modules the binary is built from (%d components)", a, len(bom.Components))
				}
			}
		}
		var linux []string
		for _, target := range s.targets {
			if goarch, ok := strings.CutPrefix(target, "linux/"); ok {
				linux = append(linux, goarch)
				if p := "lockstep_" + s.Version + "_" + goarch + ".deb"; s.sums[p] == "" {
					t.Errorf("checksums.txt names no %s", p)
				}
			}
		}
		var rpms int
		for name := range s.sums {
			if strings.HasSuffix(name, ".rpm") {
				rpms++
			}
		}
		if rpms != len(linux) || debs != len(linux) {
			t.Errorf("checksums.txt names %d .deb and %d .rpm packages, want one each for %v", debs, rpms, linux)
		}
	})

	for _, target := range s.targets {
		goarch, ok := strings.CutPrefix(target, "linux/")
		if !ok {
			continue
		}
		t.Run(target+" is static and stripped", func(t *testing.T) {
			raw := extract(t, filepath.Join(dist, s.archive("linux", goarch)), "lockstep")
			f, err := elf.NewFile(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
					t.Errorf("the binary has a %v program header: it is dynamically linked", p.Type)
				}
			}
			if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
				t.Errorf("the binary needs %v", libs)
			}
			if f.Section(".symtab") != nil {
				t.Error("the binary has a symbol table: it is not stripped")
			}
			want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
			if f.Machine != want {
				t.Errorf("machine %v, want %v", f.Machine, want)
			}
		})
	}

	t.Run("the binary prints the stamped version", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("runs the linux binary")
		}
		bin := filepath.Join(t.TempDir(), "lockstep")
		if err := os.WriteFile(bin, extract(t, filepath.Join(dist, s.archive("linux", runtime.GOARCH)), "lockstep"), 0o755); err != nil {
			t.Fatal(err)
		}
		v := versionOf(t, bin)
		// A snapshot is stamped like a release, and says it is none.
		if v.Release || !v.Snapshot || v.Version != s.Version || v.Commit != s.Commit || v.Date == "" || v.Platform != "linux/"+runtime.GOARCH {
			t.Errorf("version --format json = %+v, want snapshot %s of commit %s, not a release", v, s.Version, s.Commit)
		}
		out, _ := exec.Command(bin, "version").Output()
		if !strings.HasPrefix(string(out), "lockstep "+s.Version+" (snapshot build, not a release)\n") {
			t.Errorf("version = %q", out)
		}
	})

	t.Run("every artefact gates the ingress", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("installs the linux artefacts")
		}
		snapshotGatesTheIngress(t, s)
	})

	t.Run("the .deb installs the binary, the units, the environment file and the man pages", func(t *testing.T) {
		deb := filepath.Join(dist, "lockstep_"+s.Version+"_"+runtime.GOARCH+".deb")
		dpkg := requireTool(t, "dpkg")
		root := t.TempDir()
		if out, err := exec.Command(dpkg, "-x", deb, root).CombinedOutput(); err != nil {
			t.Fatalf("dpkg -x: %v\n%s", err, out)
		}
		for dst, src := range map[string]string{
			"usr/lib/systemd/system/lockstep-admit.service":                               "../deploy/systemd/lockstep-admit.service",
			"usr/lib/systemd/system/lockstep-agent.service":                               "../deploy/systemd/lockstep-agent.service",
			"usr/share/doc/lockstep/examples/systemd/app-ingress.service":                 "../deploy/systemd/app-ingress.service",
			"usr/share/doc/lockstep/examples/systemd/app-ingress.service.d/lockstep.conf": "../deploy/systemd/app-ingress.service.d/lockstep.conf",
			"etc/lockstep/admit.env":                                                      "../deploy/packaging/admit.env",
			"etc/lockstep/agent.env":                                                      "../deploy/packaging/agent.env",
			"usr/share/doc/lockstep/copyright":                                            "../deploy/packaging/copyright",
			"usr/share/lintian/overrides/lockstep":                                        "../deploy/packaging/lintian-overrides",
		} {
			if got, want := fileSHA256(t, filepath.Join(root, dst)), fileSHA256(t, src); got != want {
				t.Errorf("the package's /%s differs from %s", dst, src)
			}
		}
		// The man pages and the changelog, gzipped (scripts/package-docs.sh).
		for dst, src := range map[string]string{
			"usr/share/man/man1/lockstep.1.gz":       "../docs/man/lockstep.1",
			"usr/share/man/man1/lockstep-admit.1.gz": "../docs/man/lockstep-admit.1",
			"usr/share/doc/lockstep/changelog.gz":    "../CHANGELOG.md",
		} {
			if got, want := gunzipSHA256(t, filepath.Join(root, dst)), fileSHA256(t, src); got != want {
				t.Errorf("the package's /%s is not %s gzipped", dst, src)
			}
		}
		// Nothing under /usr/local: the units find /usr/bin/lockstep by name.
		if _, err := os.Lstat(filepath.Join(root, "usr/local")); !os.IsNotExist(err) {
			t.Errorf("the package installs under /usr/local (%v)", err)
		}
		if v := versionOf(t, filepath.Join(root, "usr/bin/lockstep")); v.Version != s.Version || !v.Snapshot || v.Release {
			t.Errorf("the package's /usr/bin/lockstep is %+v, want snapshot %s", v, s.Version)
		}
		ctrl := t.TempDir()
		if out, err := exec.Command(requireTool(t, "dpkg-deb"), "-e", deb, ctrl).CombinedOutput(); err != nil {
			t.Fatalf("dpkg-deb -e: %v\n%s", err, out)
		}
		conf, _ := os.ReadFile(filepath.Join(ctrl, "conffiles"))
		for _, f := range []string{"/etc/lockstep/admit.env", "/etc/lockstep/agent.env"} {
			if !strings.Contains(string(conf), f) {
				t.Errorf("conffiles = %q: an edited %s would be overwritten on upgrade", conf, f)
			}
		}
		control, _ := os.ReadFile(filepath.Join(ctrl, "control"))
		if !strings.Contains(string(control), "Architecture: "+runtime.GOARCH+"\n") || !strings.Contains(string(control), "Package: lockstep\n") {
			t.Errorf("control = %q", control)
		}
	})
}

// TestPackagesLint: the .deb passes lintian and the .rpm rpmlint without
// an error (warnings are logged), as Debian and Fedora expect of a package.
func TestPackagesLint(t *testing.T) {
	t.Parallel()
	s := loadSnapshot(t)
	if runtime.GOOS != "linux" {
		t.Skip("lints the linux packages")
	}
	// rpmlint unpacks the .rpm with `rpm2cpio | cpio -id` in a temporary
	// folder, and nfpm's payload names its files by absolute paths, which
	// GNU cpio writes where they say: as root, over the machine's /usr/bin
	// and /etc. A cpio first on its PATH keeps them in the folder.
	guard := t.TempDir()
	cpio := requireTool(t, "cpio")
	rpmlintrc, err := filepath.Abs("../deploy/packaging/lockstep.rpmlintrc")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(guard, "cpio"), []byte("#!/bin/sh\nexec "+cpio+" --no-absolute-filenames \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool, pkg string
		args      []string
	}{
		{"lintian", "lockstep_" + s.Version + "_" + runtime.GOARCH + ".deb", nil},
		{"rpmlint", "lockstep_" + s.Version + "_" + runtime.GOARCH + ".rpm", []string{"-r", rpmlintrc}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			bin := requireTool(t, tc.tool)
			pkg, err := filepath.Abs(filepath.Join(dist, tc.pkg))
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, append(tc.args, pkg)...)
			cmd.Env = append(os.Environ(), "PATH="+guard+":"+os.Getenv("PATH"))
			cmd.Dir = t.TempDir()
			out, _ := cmd.CombinedOutput()
			var errs []string
			for _, line := range strings.Split(string(out), "\n") {
				// lintian: "E: lockstep: tag ..."; rpmlint: "lockstep.x86_64: E: tag ...".
				if strings.HasPrefix(line, "E: ") || strings.Contains(line, ": E: ") {
					errs = append(errs, line)
				}
			}
			if len(errs) > 0 {
				t.Errorf("%s %s: %d errors:\n%s", tc.tool, tc.pkg, len(errs), strings.Join(errs, "\n"))
			}
			t.Logf("%s %s:\n%s", tc.tool, tc.pkg, out)
		})
	}
}

func hasComponent(cs []struct{ Name, Version string }, name string) bool {
	for _, c := range cs {
		if c.Name == name && c.Version != "" {
			return true
		}
	}
	return false
}

func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("LOCKSTEP_TEST_RELEASE") == "1" {
			t.Fatalf("%s is not installed", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return p
}

// releaseServer serves dist/ as GitHub serves a release's assets
// (/TAG/NAME), with the named files replaced by the given bytes.
func releaseServer(t *testing.T, s snapshot, replace map[string][]byte) (*httptest.Server, *requests) {
	t.Helper()
	tag := "/v" + s.Version + "/"
	got := &requests{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.add(r)
		name, ok := strings.CutPrefix(r.URL.Path, tag)
		if !ok || strings.Contains(name, "/") {
			http.NotFound(w, r)
			return
		}
		if b, ok := replace[name]; ok {
			w.Write(b)
			return
		}
		http.ServeFile(w, r, filepath.Join(dist, name))
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

type scriptRun struct {
	code   int
	stdout string
	stderr string
}

func runScript(t *testing.T, shell, script string, env []string, args ...string) scriptRun {
	t.Helper()
	cmd := exec.Command(shell, append([]string{script}, args...)...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := scriptRun{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestActionInstallsTheRelease(t *testing.T) {
	t.Parallel()
	s := loadSnapshot(t)
	if runtime.GOOS != "linux" {
		t.Skip("runs the linux binary")
	}
	runnerArch := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	tag := "v" + s.Version
	install := func(t *testing.T, url, cache string, env ...string) scriptRun {
		return runScript(t, "bash", "action-install.sh", append([]string{
			"RUNNER_OS=Linux", "RUNNER_ARCH=" + runnerArch, "RUNNER_TEMP=" + t.TempDir(), "RUNNER_TOOL_CACHE=" + cache,
			"INPUT_VERSION=" + tag, "INPUT_VERIFY_SIGNATURE=false", "INPUT_DOWNLOAD_URL=" + url, "INPUT_ALLOW_HTTP_DOWNLOAD=true",
		}, env...))
	}

	t.Run("the right archive, verified, then from the tool cache", func(t *testing.T) {
		srv, got := releaseServer(t, s, nil)
		cache := t.TempDir()
		r := install(t, srv.URL, cache)
		want := filepath.Join(cache, "lockstep", s.Version, runtime.GOARCH, "lockstep")
		if r.code != 0 || strings.TrimSpace(r.stdout) != want {
			t.Fatalf("install: exit %d, stdout %q, stderr %s; want %s", r.code, r.stdout, r.stderr, want)
		}
		if v := versionOf(t, want); v.Version != s.Version || v.Platform != "linux/"+runtime.GOARCH {
			t.Errorf("installed %+v, want %s for linux/%s", v, s.Version, runtime.GOARCH)
		}
		if fmt.Sprint(got.list()) != fmt.Sprintf("[/%s/checksums.txt /%s/%s]", tag, tag, s.archive("linux", runtime.GOARCH)) {
			t.Errorf("downloads %v", got.list())
		}
		// action.sh runs what it installed: record refuses generation 0 (exit 2), not an install failure.
		ar := runAction(t, "", t.TempDir(), map[string]string{"RELEASE": "web", "GENERATION": "0", "VERSION": tag, "DOWNLOAD_URL": srv.URL, "ALLOW_HTTP_DOWNLOAD": "true", "VERIFY_SIGNATURE": "false"},
			"RUNNER_OS=Linux", "RUNNER_ARCH="+runnerArch, "RUNNER_TOOL_CACHE="+cache)
		if !strings.Contains(ar.stderr, "from the tool cache") || ar.code != 2 || !strings.Contains(ar.stdout, "::error title=lockstep record::") {
			t.Errorf("action.sh with version %s: exit %d, stdout %q, stderr %s; want the cached release running record", tag, ar.code, ar.stdout, ar.stderr)
		}
		// From the tool cache, verified again: checksums.txt is fetched
		// afresh, the archive is not.
		got.reset()
		r = install(t, srv.URL, cache)
		if r.code != 0 || strings.TrimSpace(r.stdout) != want || fmt.Sprint(got.list()) != fmt.Sprintf("[/%s/checksums.txt]", tag) ||
			!strings.Contains(r.stderr, "from the tool cache") {
			t.Errorf("second install: exit %d, %q, downloads %v, stderr %s; want the tool cache", r.code, r.stdout, got.list(), r.stderr)
		}
	})

	t.Run("a bad checksum is refused and installs nothing", func(t *testing.T) {
		a := s.archive("linux", runtime.GOARCH)
		raw, err := os.ReadFile(filepath.Join(dist, a))
		if err != nil {
			t.Fatal(err)
		}
		raw[len(raw)/2] ^= 0xff
		srv, _ := releaseServer(t, s, map[string][]byte{a: raw})
		cache := t.TempDir()
		r := install(t, srv.URL, cache)
		if r.code != 1 || !strings.Contains(r.stderr, "want "+s.sums[a]) {
			t.Errorf("tampered archive: exit %d, stderr %s; want 1 and the checksum named", r.code, r.stderr)
		}
		assertEmpty(t, filepath.Join(cache, "lockstep", s.Version, runtime.GOARCH))
	})

	t.Run("a tampered checksums.txt against its pin is refused", func(t *testing.T) {
		srv, _ := releaseServer(t, s, nil)
		cache := t.TempDir()
		r := install(t, srv.URL, cache, "LOCKSTEP_CHECKSUMS_SHA256="+strings.Repeat("0", 64))
		if r.code != 1 || !strings.Contains(r.stderr, "checksums.txt") {
			t.Errorf("wrong pin: exit %d, stderr %s; want 1", r.code, r.stderr)
		}
		assertEmpty(t, filepath.Join(cache, "lockstep", s.Version, runtime.GOARCH))
		r = install(t, srv.URL, cache, "LOCKSTEP_CHECKSUMS_SHA256="+fileSHA256(t, filepath.Join(dist, "checksums.txt")))
		if r.code != 0 {
			t.Errorf("right pin: exit %d, stderr %s", r.code, r.stderr)
		}
	})

	t.Run("an unknown architecture or OS is refused", func(t *testing.T) {
		srv, got := releaseServer(t, s, nil)
		for _, env := range [][]string{{"RUNNER_ARCH=ARM"}, {"RUNNER_ARCH=X86"}, {"RUNNER_OS=Windows"}} {
			r := install(t, srv.URL, t.TempDir(), env...)
			if r.code != 2 || !strings.Contains(r.stderr, "has no lockstep release") {
				t.Errorf("%v: exit %d, stderr %s; want 2", env, r.code, r.stderr)
			}
		}
		// The Action reports it as a failed install step.
		ar := runAction(t, "", t.TempDir(), map[string]string{"RELEASE": "web", "GENERATION": "1", "VERSION": tag, "DOWNLOAD_URL": srv.URL, "ALLOW_HTTP_DOWNLOAD": "true"},
			"RUNNER_OS=Linux", "RUNNER_ARCH=ARM")
		if ar.code != 2 || !strings.Contains(ar.stdout, "::error title=lockstep install::") {
			t.Errorf("action.sh on an ARM runner: exit %d, stdout %q; want 2 and an install annotation", ar.code, ar.stdout)
		}
		if len(got.list()) != 0 {
			t.Errorf("downloads %v for an unsupported runner", got.list())
		}
	})

	t.Run("the action's major tag resolves to its newest release", func(t *testing.T) {
		// The API lists releases newest-created first, not by version; a
		// pre-release and another major never win (scripts/attack_action_test.go
		// has drafts, flagged pre-releases and forged tags). The snapshot is not a
		// release tag, so the resolved version's download is what shows
		// the choice.
		srv, got := releaseServer(t, s, nil)
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/repos/lockstep-dev/lockstep/releases" {
				http.NotFound(w, r)
				return
			}
			fmt.Fprint(w, `[{"tag_name": "v0.10.0-rc.1", "draft": false, "prerelease": true}, {"tag_name": "v0.2.9", "draft": false, "prerelease": false},
				{"tag_name": "v1.0.0", "draft": false, "prerelease": false}, {"tag_name": "v0.10.0", "draft": false, "prerelease": false},
				{"tag_name": "v0.9.12", "draft": false, "prerelease": false}]`)
		}))
		defer api.Close()
		r := install(t, srv.URL, t.TempDir(), "INPUT_VERSION=", "ACTION_REF=v0", "LOCKSTEP_API_URL="+api.URL)
		if !strings.Contains(r.stderr, "v0 is release v0.10.0") {
			t.Errorf("@v0: stderr %s; want it resolved to v0.10.0", r.stderr)
		}
		if len(got.list()) == 0 || !strings.HasPrefix(got.list()[0], "/v0.10.0/") {
			t.Errorf("@v0 downloaded %v, want v0.10.0's files", got.list())
		}
		if r.code == 0 {
			t.Errorf("@v0 installed although v0.10.0 is not the snapshot the server holds: %s", r.stderr)
		}
		// The same, with the snapshot's own tag as the ref: installed.
		r = install(t, srv.URL, t.TempDir(), "INPUT_VERSION=", "ACTION_REF="+tag)
		if r.code != 0 || !strings.Contains(r.stderr, tag+" linux/"+runtime.GOARCH+" into ") {
			t.Errorf("@%s: exit %d, stderr %s; want it installed", tag, r.code, r.stderr)
		}
		none := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `[{"tag_name": "v1.0.0", "draft": false, "prerelease": false}, {"tag_name": "v0.3.0-rc.1", "draft": false, "prerelease": true}]`)
		}))
		defer none.Close()
		r = install(t, srv.URL, t.TempDir(), "INPUT_VERSION=", "ACTION_REF=v0", "LOCKSTEP_API_URL="+none.URL)
		if r.code != 3 || !strings.Contains(r.stderr, "no published v0.x.y release") {
			t.Errorf("@v0 with no v0 release: exit %d, stderr %s; want 3", r.code, r.stderr)
		}
		r = install(t, srv.URL, t.TempDir(), "INPUT_VERSION=", "ACTION_REF=main")
		if r.code != 2 {
			t.Errorf("@main with no version: exit %d, stderr %s; want 2", r.code, r.stderr)
		}
	})
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("%s holds %v after a refused install", dir, entries)
	}
	if _, err := os.Stat(dir + ".complete"); err == nil {
		t.Errorf("%s.complete exists after a refused install", dir)
	}
}

func TestHookInstallsTheRelease(t *testing.T) {
	s := loadSnapshot(t)
	if runtime.GOOS != "linux" {
		t.Skip("runs the linux binary")
	}
	srv, _ := releaseServer(t, s, nil)
	bin := filepath.Join(t.TempDir(), "bin", "lockstep")
	env := []string{"LOCKSTEP_VERSION=v" + s.Version, "LOCKSTEP_RELEASE_URL=" + srv.URL, "LOCKSTEP_ALLOW_HTTP=1", "LOCKSTEP_BIN=" + bin,
		"LOCKSTEP_ENV_FILE=/nonexistent", "LOCKSTEP_REPORT=" + filepath.Join(t.TempDir(), "admit.json")}

	// Installed, verified, then run: `admit` with no manifest is a usage error.
	r := runScript(t, "sh", "../deploy/hooks/lockstep-admit.sh", env)
	if r.code != 2 || !strings.Contains(r.stderr, "matches checksums.txt") {
		t.Fatalf("hook: exit %d, stderr %s; want the release installed and admit's usage error (2)", r.code, r.stderr)
	}
	if v := versionOf(t, bin); v.Version != s.Version {
		t.Errorf("installed %+v", v)
	}
	// A binary that is not the pinned one never runs.
	r = runScript(t, "sh", "../deploy/hooks/lockstep-admit.sh", append(env, "LOCKSTEP_SHA256="+strings.Repeat("0", 64)))
	if r.code != 3 || !strings.Contains(r.stderr, "not running it") {
		t.Errorf("hook with a wrong LOCKSTEP_SHA256: exit %d, stderr %s; want 3", r.code, r.stderr)
	}
}

func TestCloudInitInstallsTheRelease(t *testing.T) {
	s := loadSnapshot(t)
	if runtime.GOOS != "linux" {
		t.Skip("runs the linux binary")
	}
	raw, err := os.ReadFile("../deploy/cloud-init/lockstep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ci struct {
		RunCmd []any `yaml:"runcmd"`
	}
	if err := yaml.Unmarshal(raw, &ci); err != nil {
		t.Fatal(err)
	}
	script, _ := ci.RunCmd[0].(string)
	if !strings.Contains(script, "https://github.com/lockstep-dev/lockstep/releases/download/$version") {
		t.Fatalf("the first runcmd is not the install: %q", script)
	}
	srv, _ := releaseServer(t, s, nil)
	run := func(t *testing.T, checksums string) (scriptRun, string) {
		dest := filepath.Join(t.TempDir(), "lockstep")
		sc := strings.NewReplacer(
			"version=v0.1.0", "version=v"+s.Version,
			"checksums_sha256=REPLACE-WITH-THE-SHA256-OF-checksums.txt", "checksums_sha256="+checksums,
			"https://github.com/lockstep-dev/lockstep/releases/download", srv.URL,
			"/usr/local/bin/lockstep", dest,
		).Replace(script)
		path := filepath.Join(t.TempDir(), "runcmd.sh")
		if err := os.WriteFile(path, []byte(sc+"echo installed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return runScript(t, "sh", path, nil), dest
	}
	r, dest := run(t, fileSHA256(t, filepath.Join(dist, "checksums.txt")))
	if r.code != 0 || !strings.HasSuffix(r.stdout, "installed\n") {
		t.Fatalf("cloud-init install: exit %d, %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	if v := versionOf(t, dest); v.Version != s.Version || v.Platform != "linux/"+runtime.GOARCH {
		t.Errorf("installed %+v", v)
	}
	r, dest = run(t, strings.Repeat("0", 64))
	if r.code == 0 || strings.Contains(r.stdout, "installed") {
		t.Errorf("a wrong checksums.txt pin: exit %d, %q; want the rest of runcmd stopped", r.code, r.stdout)
	}
	if _, err := os.Stat(dest); err == nil {
		t.Error("a binary was installed despite the wrong checksum")
	}
}
