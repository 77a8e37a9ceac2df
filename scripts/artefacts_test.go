package scripts

// Every artefact ships the gate whole (issue 35, item 7): the release
// archive, the .deb and the .rpm carry deploy/systemd whole (every unit
// and the drop-in that makes the ingress wait for the gate), and, each
// installed into a scratch root the way the docs say, systemd itself finds
// that the ingress cannot start unless lockstep-admit.service succeeded.
//
// TestReleaseConfigShipsTheUnits reads .goreleaser.yaml and lays out what
// its archive `files` and nfpm `contents` put in the artefacts (GoReleaser's
// and nfpm's rule: a directory brings every file in it, kept relative to
// it; a glob's files are kept relative to the directory of their longest
// common prefix, so a glob that matches one file loses its directory), so
// it runs without GoReleaser. TestSnapshotRelease ("every artefact gates
// the ingress") does the same with the real archive, .deb and .rpm of
// dist/ (scripts/release-snapshot.sh).

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lockstep-dev/lockstep/internal/testkit/systemdtest"
	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
)

// fileSpec is an entry of an archive's files or an nfpm's contents.
type fileSpec struct {
	Src, Dst, Type string
	// Packager is nfpm's: "deb" or "rpm" for an entry of one package only.
	Packager    string
	StripParent bool
}

func (f *fileSpec) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		f.Src = n.Value
		return nil
	}
	var v struct {
		Src         string `yaml:"src"`
		Dst         string `yaml:"dst"`
		Type        string `yaml:"type"`
		Packager    string `yaml:"packager"`
		StripParent bool   `yaml:"strip_parent"`
	}
	if err := n.Decode(&v); err != nil {
		return err
	}
	*f = fileSpec{Src: v.Src, Dst: v.Dst, Type: v.Type, Packager: v.Packager, StripParent: v.StripParent}
	return nil
}

type releaseConfig struct {
	Archives []struct {
		Files []fileSpec `yaml:"files"`
	} `yaml:"archives"`
	NFPMs []struct {
		Bindir   string     `yaml:"bindir"`
		Contents []fileSpec `yaml:"contents"`
	} `yaml:"nfpms"`
}

// layout evaluates specs as GoReleaser (archives) and nfpm (contents, for
// packager "deb" or "rpm") do, against the repository at repo: destination
// → source path (relative to repo), and the symbolic links (destination →
// target). An entry of another packager is left out, and so is an rpm
// %doc entry from the .deb; nfpm takes a %doc entry's source as a path,
// not a glob.
func layout(t *testing.T, repo string, specs []fileSpec, packager string) (files, links map[string]string) {
	t.Helper()
	files, links = map[string]string{}, map[string]string{}
	for _, f := range specs {
		if f.Packager != "" && f.Packager != packager || f.Type == "doc" && packager != "rpm" {
			continue
		}
		if f.Type == "symlink" {
			links[f.Dst] = f.Src
			continue
		}
		if f.Type == "doc" {
			if _, err := os.Stat(filepath.Join(repo, f.Src)); err != nil {
				t.Fatalf("%%doc %q: %v (nfpm does not glob a %%doc source)", f.Src, err)
			}
			files[f.Dst] = f.Src
			continue
		}
		if strings.Contains(f.Src, "**") || strings.ContainsAny(f.Src, "{[?") || strings.Contains(f.Src, "{{") {
			t.Fatalf("%q: this test lays out only plain paths and * globs; teach it the pattern first", f.Src)
		}
		matches, err := filepath.Glob(filepath.Join(repo, f.Src))
		if err != nil || len(matches) == 0 {
			t.Fatalf("%q matches nothing (%v)", f.Src, err)
		}
		var srcs []string
		for _, m := range matches {
			filepath.WalkDir(m, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(repo, p)
					srcs = append(srcs, filepath.ToSlash(rel))
				}
				return nil
			})
		}
		prefix := path.Clean(f.Src)
		if _, err := os.Stat(filepath.Join(repo, f.Src)); err != nil || strings.Contains(f.Src, "*") {
			prefix = path.Dir(commonPrefix(srcs))
		}
		for _, s := range srcs {
			var dst string
			switch {
			case f.Dst == "":
				dst = s
			case f.StripParent:
				dst = path.Join(f.Dst, path.Base(s))
			default:
				rel, err := filepath.Rel(prefix, s)
				if err != nil {
					t.Fatal(err)
				}
				dst = path.Join(f.Dst, filepath.ToSlash(rel))
			}
			if _, dup := files[dst]; !dup { // the first wins, as in GoReleaser
				files[dst] = s
			}
		}
	}
	return files, links
}

func commonPrefix(s []string) string {
	p := s[0]
	for _, x := range s[1:] {
		for !strings.HasPrefix(x, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// unitFiles are deploy/systemd's files, relative to it.
func unitFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	filepath.WalkDir("../deploy/systemd", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel("../deploy/systemd", p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(out) == 0 {
		t.Fatal("deploy/systemd holds no unit")
	}
	return out
}

// extractTarGz unpacks a .tar.gz into a new directory.
func extractTarGz(t *testing.T, archive string) string {
	t.Helper()
	dir := t.TempDir()
	walkTarGz(t, archive, func(h *tar.Header, body []byte) bool {
		name := path.Clean(h.Name)
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			t.Fatalf("%s holds %q, outside the archive", archive, h.Name)
		}
		if body != nil {
			systemdtest.WriteFile(t, dir, "/"+name, string(body), os.FileMode(h.Mode).Perm())
		}
		return true
	})
	return dir
}

// installArchive installs an extracted release archive into a new scratch
// root as docs/release.md says:
//
//	install -m 0755 lockstep /usr/local/bin/lockstep
//	install -D -m 0644 systemd/admit.env /etc/lockstep/admit.env
//	cp -R systemd/*.service systemd/*.service.d /etc/systemd/system/
func installArchive(t *testing.T, dir string) string {
	t.Helper()
	root := systemdtest.NewRoot(t)
	bin, err := os.ReadFile(filepath.Join(dir, "lockstep"))
	if err != nil {
		t.Fatalf("the archive has no lockstep binary: %v", err)
	}
	systemdtest.WriteFile(t, root, "/usr/local/bin/lockstep", string(bin), 0o755)
	if env, err := os.ReadFile(filepath.Join(dir, "systemd/admit.env")); err == nil {
		systemdtest.WriteFile(t, root, "/etc/lockstep/admit.env", string(env), 0o644)
	}
	for _, pattern := range []string{"systemd/*.service", "systemd/*.service.d"} {
		matches, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.IsDir() {
				systemdtest.CopyTree(t, m, filepath.Join(root, "etc/systemd/system", filepath.Base(m)))
			} else {
				raw, _ := os.ReadFile(m)
				systemdtest.WriteFile(t, root, "/etc/systemd/system/"+filepath.Base(m), string(raw), 0o644)
			}
		}
	}
	return root
}

// installPackage installs an unpacked .deb or .rpm (its files as dpkg -x
// or rpm2cpio | cpio lays them out) into a new scratch root, then the
// app's example units as the README says:
//
//	cp -R /usr/share/doc/lockstep/examples/systemd/. /etc/systemd/system/
func installPackage(t *testing.T, tree string) string {
	t.Helper()
	root := systemdtest.NewRoot(t)
	systemdtest.CopyTree(t, tree, root)
	examples := filepath.Join(root, "usr/share/doc/lockstep/examples/systemd")
	if _, err := os.Stat(examples); err != nil {
		t.Fatalf("the package has no example units: %v", err)
	}
	systemdtest.CopyTree(t, examples, filepath.Join(root, "etc/systemd/system"))
	return root
}

// carries checks that the files an artefact installed (dst → where, in
// root) are deploy/systemd's, byte for byte, every one of them.
func carries(t *testing.T, what, root string, where func(rel string) []string) {
	t.Helper()
	for _, rel := range unitFiles(t) {
		want, err := os.ReadFile(filepath.Join("../deploy/systemd", rel))
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for _, p := range where(rel) {
			got, err := os.ReadFile(filepath.Join(root, p))
			if err != nil {
				continue
			}
			found = true
			if !bytes.Equal(got, want) {
				t.Errorf("%s: /%s differs from deploy/systemd/%s", what, p, rel)
			}
		}
		if !found {
			t.Errorf("%s does not carry deploy/systemd/%s (looked at %v)", what, rel, where(rel))
		}
	}
}

// gatesTheIngress has systemd verify every unit the artefact installed
// and judge the ingress gated.
func gatesTheIngress(t *testing.T, what, root string) {
	t.Helper()
	for _, rel := range unitFiles(t) {
		if strings.Contains(rel, "/") {
			continue // a drop-in: verified with its unit
		}
		if err := systemdtest.Verify(root, rel); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	if err := systemdtest.Gated(root, "app-ingress.service", "lockstep-admit.service"); err != nil {
		t.Errorf("%s, installed: %v", what, err)
	}
}

// archiveWhere: the archive's units, installed, are in /etc/systemd/system.
func archiveWhere(rel string) []string { return []string{"etc/systemd/system/" + rel} }

// packageWhere: the package's units are in /usr/lib/systemd/system (the
// gate's own) or, as examples copied, in /etc/systemd/system.
func packageWhere(rel string) []string {
	return []string{"usr/lib/systemd/system/" + rel, "etc/systemd/system/" + rel}
}

func TestReleaseConfigShipsTheUnits(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg releaseConfig
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Archives) != 1 || len(cfg.NFPMs) != 1 {
		t.Fatalf(".goreleaser.yaml has %d archives and %d nfpms, this test knows one of each", len(cfg.Archives), len(cfg.NFPMs))
	}
	stub := "#!/bin/sh\nexit 0\n"

	t.Run("the archive", func(t *testing.T) {
		files, _ := layout(t, "..", cfg.Archives[0].Files, "")
		// GoReleaser adds the binary at the archive's top.
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		tw := tar.NewWriter(zw)
		add := func(name string, body []byte, mode int64) {
			tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(body)), Typeflag: tar.TypeReg})
			tw.Write(body)
		}
		add("lockstep", []byte(stub), 0o755)
		for dst, src := range files {
			body, err := os.ReadFile(filepath.Join("..", src))
			if err != nil {
				t.Fatal(err)
			}
			add(dst, body, 0o644)
		}
		tw.Close()
		zw.Close()
		archive := filepath.Join(t.TempDir(), "lockstep_0.0.0_linux_"+runtime.GOARCH+".tar.gz")
		if err := os.WriteFile(archive, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		root := installArchive(t, extractTarGz(t, archive))
		carries(t, "the archive", root, archiveWhere)
		gatesTheIngress(t, "the archive", root)
	})

	// The packages' gzipped man pages and changelog, as GoReleaser's before
	// hook makes them.
	if out, err := exec.Command("bash", "package-docs.sh").CombinedOutput(); err != nil {
		t.Fatalf("package-docs.sh: %v\n%s", err, out)
	}
	laid := map[string]map[string]string{}
	for _, packager := range []string{"deb", "rpm"} {
		t.Run("the ."+packager, func(t *testing.T) {
			nf := cfg.NFPMs[0]
			files, links := layout(t, "..", nf.Contents, packager)
			laid[packager] = files
			tree := t.TempDir()
			systemdtest.WriteFile(t, tree, path.Join(nf.Bindir, "lockstep"), stub, 0o755)
			for dst, src := range files {
				body, err := os.ReadFile(filepath.Join("..", src))
				if err != nil {
					t.Fatal(err)
				}
				systemdtest.WriteFile(t, tree, dst, string(body), 0o644)
			}
			for dst, target := range links {
				os.MkdirAll(filepath.Join(tree, path.Dir(dst)), 0o755)
				if err := os.Symlink(target, filepath.Join(tree, dst)); err != nil {
					t.Fatal(err)
				}
			}
			root := installPackage(t, tree)
			carries(t, "the ."+packager, root, packageWhere)
			gatesTheIngress(t, "the ."+packager, root)
		})
	}
	t.Run("the .deb and the .rpm ship the same files", func(t *testing.T) {
		// But Debian's own: the copyright file, the changelog and lintian's
		// overrides. An rpm %doc list that misses a man page fails here.
		debOnly := []string{"/usr/share/doc/lockstep/copyright", "/usr/share/doc/lockstep/changelog.gz", "/usr/share/lintian/overrides/lockstep"}
		for dst, src := range laid["deb"] {
			if slices.Contains(debOnly, path.Join("/", dst)) {
				continue
			}
			if laid["rpm"][dst] != src {
				t.Errorf("the .deb has %s (from %s), the .rpm %q", dst, src, laid["rpm"][dst])
			}
		}
		for dst := range laid["rpm"] {
			if _, ok := laid["deb"][dst]; !ok {
				t.Errorf("the .rpm has %s, the .deb does not", dst)
			}
		}
	})

	t.Run("a glob that matches one file loses its directory", func(t *testing.T) {
		// The rule the comments in .goreleaser.yaml warn of, shown on the
		// drop-in: written as a glob, it would land beside the units, where
		// systemd does not read it, and the ingress would not wait.
		files, _ := layout(t, "..", []fileSpec{{Src: "deploy/systemd/*.service.d/*.conf", Dst: "systemd"}}, "")
		if _, ok := files["systemd/lockstep.conf"]; !ok || len(files) != 1 {
			t.Fatalf("layout = %v", files)
		}
		dir := t.TempDir()
		for dst, src := range files {
			body, _ := os.ReadFile(filepath.Join("..", src))
			systemdtest.WriteFile(t, dir, "/"+dst, string(body), 0o644)
		}
		for _, u := range unitFiles(t) {
			if !strings.Contains(u, "/") {
				body, _ := os.ReadFile(filepath.Join("../deploy/systemd", u))
				systemdtest.WriteFile(t, dir, "/systemd/"+u, string(body), 0o644)
			}
		}
		systemdtest.WriteFile(t, dir, "/lockstep", stub, 0o755)
		if err := systemdtest.Gated(installArchive(t, dir), "app-ingress.service", "lockstep-admit.service"); err == nil {
			t.Error("an archive whose drop-in lost its directory is judged gated")
		}
	})
}

// snapshotGatesTheIngress is TestSnapshotRelease's check of dist/: the
// host's archive, .deb and .rpm, each installed into a scratch root.
func snapshotGatesTheIngress(t *testing.T, s snapshot) {
	t.Run("the archive", func(t *testing.T) {
		root := installArchive(t, extractTarGz(t, filepath.Join(dist, s.archive("linux", runtime.GOARCH))))
		carries(t, "the archive", root, archiveWhere)
		gatesTheIngress(t, "the archive", root)
	})
	t.Run("the .deb", func(t *testing.T) {
		tree := t.TempDir()
		deb := filepath.Join(dist, "lockstep_"+s.Version+"_"+runtime.GOARCH+".deb")
		if out, err := exec.Command(requireTool(t, "dpkg"), "-x", deb, tree).CombinedOutput(); err != nil {
			t.Fatalf("dpkg -x: %v\n%s", err, out)
		}
		root := installPackage(t, tree)
		carries(t, "the .deb", root, packageWhere)
		gatesTheIngress(t, "the .deb", root)
	})
	t.Run("the .rpm", func(t *testing.T) {
		rpmArch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
		var rpms []string
		for name := range s.sums {
			if strings.HasSuffix(name, ".rpm") && (strings.Contains(name, runtime.GOARCH) || strings.Contains(name, rpmArch)) {
				rpms = append(rpms, name)
			}
		}
		if len(rpms) != 1 {
			t.Fatalf("checksums.txt names %v for %s, want one .rpm", rpms, runtime.GOARCH)
		}
		rpm2cpio, cpio := requireTool(t, "rpm2cpio"), requireTool(t, "cpio")
		tree := t.TempDir()
		rpm, err := filepath.Abs(filepath.Join(dist, rpms[0]))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "-c", `"$1" "$2" | "$3" -idm --quiet --no-absolute-filenames`, "sh", rpm2cpio, rpm, cpio)
		cmd.Dir = tree
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("rpm2cpio | cpio -idm: %v\n%s", err, out)
		}
		root := installPackage(t, tree)
		carries(t, "the .rpm", root, packageWhere)
		gatesTheIngress(t, "the .rpm", root)
	})
}

// TestUnitsRunLockstepByName: the units name lockstep without a path, and
// the docs say that systemd then runs /usr/local/bin/lockstep (the archive,
// cloud-init) before /usr/bin/lockstep (the packages). systemd's own search
// path says which comes first.
func TestUnitsRunLockstepByName(t *testing.T) {
	testenv.Require(t, "systemd-path")
	out, err := exec.Command("systemd-path", "search-binaries-default").Output()
	if err != nil {
		t.Fatalf("systemd-path search-binaries-default: %v", err)
	}
	dirs := strings.Split(strings.TrimSpace(string(out)), ":")
	local, usr := slices.Index(dirs, "/usr/local/bin"), slices.Index(dirs, "/usr/bin")
	if local < 0 || usr < 0 || local > usr {
		t.Errorf("systemd's search path %q: want /usr/local/bin before /usr/bin, as the units' comments and docs/release.md say", dirs)
	}
	for _, rel := range unitFiles(t) {
		b, err := os.ReadFile(filepath.Join("../deploy/systemd", rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "Exec") && strings.Contains(line, "/lockstep ") {
				t.Errorf("%s: %q names lockstep by a path; the archive and the packages install it in different places", rel, line)
			}
		}
	}
}
