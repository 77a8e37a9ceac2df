package scripts

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/atomicfile"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
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
//
// A linter's report is a function of the package's bytes, the linter's
// version and its arguments, so a clean report is kept per machine under
// that key (lintCache) and read back while the package is unchanged, as
// the snapshot itself is: lintian costs about 17 CPU-seconds a run.
// LOCKSTEP_TEST_FULL=1 (the full run, CI) always lints afresh.
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
	rc, err := os.ReadFile(rpmlintrc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool, pkg string
		args      []string
		config    []byte   // what else the report depends on
		needs     []string // what else the tool runs
	}{
		{"lintian", "lockstep_" + s.Version + "_" + runtime.GOARCH + ".deb", nil, nil, nil},
		// rpmlint reads the package with rpm, only its Recommends in
		// Debian: without it, its one finding is a fatal error reading it.
		{"rpmlint", "lockstep_" + s.Version + "_" + runtime.GOARCH + ".rpm", []string{"-r", rpmlintrc}, rc, []string{"rpm"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			t.Parallel()
			bin := requireTool(t, tc.tool)
			for _, n := range tc.needs {
				requireTool(t, n)
			}
			pkg, err := filepath.Abs(filepath.Join(dist, tc.pkg))
			if err != nil {
				t.Fatal(err)
			}
			cache := lintCache(t, bin, pkg, tc.args, tc.config)
			out, ok := cache.get(t)
			if !ok {
				cmd := exec.Command(bin, append(tc.args, pkg)...)
				cmd.Env = append(os.Environ(), "PATH="+guard+":"+os.Getenv("PATH"))
				cmd.Dir = t.TempDir()
				out, _ = cmd.CombinedOutput()
			}
			var errs []string
			for _, line := range strings.Split(string(out), "\n") {
				// lintian: "E: lockstep: tag ..."; rpmlint: "lockstep.x86_64: E: tag ...".
				if strings.HasPrefix(line, "E: ") || strings.Contains(line, ": E: ") {
					errs = append(errs, line)
				}
			}
			if len(errs) > 0 {
				t.Errorf("%s %s: %d errors:\n%s", tc.tool, tc.pkg, len(errs), strings.Join(errs, "\n"))
			} else if !ok {
				cache.put(t, out)
			}
			t.Logf("%s %s:\n%s", tc.tool, tc.pkg, out)
		})
	}
}

// lintReport is where a clean report of one linter on one package is
// kept: $LOCKSTEP_CACHE/lint/KEY, KEY the SHA-256 of the linter's name
// and --version, its arguments (a file by its name), config (the
// content of the files they name) and the package's SHA-256.
type lintReport struct{ path string }

func lintCache(t *testing.T, tool, pkg string, args []string, config []byte) lintReport {
	t.Helper()
	dir, err := testenv.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	version, err := exec.Command(tool, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", tool, err)
	}
	f, err := os.Open(pkg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		t.Fatal(err)
	}
	// A file named in the arguments counts by its name and content
	// (config), not by its clone's path: every clone shares the report.
	named := make([]string, len(args))
	for i, a := range args {
		named[i] = a
		if filepath.IsAbs(a) {
			named[i] = filepath.Base(a)
		}
	}
	key := sha256.New()
	for _, part := range [][]byte{[]byte(filepath.Base(tool)), version, []byte(strings.Join(named, "\x00")), config, sum.Sum(nil)} {
		fmt.Fprintf(key, "%d:%s", len(part), part)
	}
	return lintReport{filepath.Join(dir, "lint", hex.EncodeToString(key.Sum(nil)))}
}

// get returns the kept report, unless LOCKSTEP_TEST_FULL=1.
func (r lintReport) get(t *testing.T) ([]byte, bool) {
	t.Helper()
	if os.Getenv("LOCKSTEP_TEST_FULL") == "1" {
		return nil, false
	}
	out, err := os.ReadFile(r.path)
	if err != nil {
		return nil, false
	}
	t.Logf("the package, the linter and its arguments are those of a clean report kept in %s: read back, not linted again (LOCKSTEP_TEST_FULL=1 lints afresh)", r.path)
	return out, true
}

// put keeps a clean report, written whole or not at all
// (atomicfile.Write); a report that cannot be kept is only logged.
func (r lintReport) put(t *testing.T, out []byte) {
	t.Helper()
	err := os.MkdirAll(filepath.Dir(r.path), 0o755)
	if err == nil {
		err = atomicfile.Write(r.path, out, 0o644)
	}
	if err != nil {
		t.Logf("keeping the report: %v", err)
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
			t.Fatalf("%s is not installed: %s", name, testenv.HowToInstall(name))
		}
		t.Skipf("%s is not installed: %s", name, testenv.HowToInstall(name))
	}
	return p
}
