package deploy_test

// Every artefact ships the gate whole (issue 35, item 7): deploy/systemd is
// the one source of the units; cloud-init carries them byte for byte (this
// file's drift test writes them with -update), and systemd itself, loading
// them in a scratch root, must find that the ingress cannot start unless
// the gate ran and succeeded. The release archive, the .deb, the .rpm and
// the image are checked the same way in scripts/artefacts_test.go.

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lockstep-dev/lockstep/internal/testkit/systemdtest"
)

var update = flag.Bool("update", false, "rewrite deploy/cloud-init/lockstep.yaml's units from deploy/systemd")

const (
	ingress = "app-ingress.service"
	gate    = "lockstep-admit.service"
	units   = "/etc/systemd/system/"
)

// sourceUnits are the files of deploy/systemd by path relative to it.
func sourceUnits(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir("systemd", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("systemd", p)
		out[filepath.ToSlash(rel)] = string(raw)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withDropIns returns the units named and every drop-in deploy/systemd
// has for them (UNIT.d/*.conf), sorted.
func withDropIns(src map[string]string, names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, n)
		for rel := range src {
			if strings.HasPrefix(rel, n+".d/") {
				out = append(out, rel)
			}
		}
	}
	slices.Sort(out)
	return out
}

type cloudConfig struct {
	WriteFiles []struct {
		Path        string `yaml:"path"`
		Permissions string `yaml:"permissions"`
		Content     string `yaml:"content"`
	} `yaml:"write_files"`
	RunCmd []any `yaml:"runcmd"`
}

func readCloudInit(t *testing.T) (cloudConfig, []byte) {
	t.Helper()
	raw, err := os.ReadFile("cloud-init/lockstep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c cloudConfig
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("cloud-init/lockstep.yaml: %v", err)
	}
	return c, raw
}

// enabled is what runcmd's systemctl enable names.
func (c cloudConfig) enabled(t *testing.T) []string {
	t.Helper()
	for _, cmd := range c.RunCmd {
		s, _ := cmd.(string)
		if rest, ok := strings.CutPrefix(s, "systemctl enable "); ok {
			return strings.Fields(rest)
		}
	}
	t.Fatal("cloud-init's runcmd enables no unit")
	return nil
}

var unitBlock = regexp.MustCompile(`(?s)(  # BEGIN units from deploy/systemd[^\n]*\n).*?(  # END units from deploy/systemd\n)`)

// TestCloudInitCarriesTheUnits: cloud-init writes, byte for byte, the
// units of deploy/systemd that it enables and every drop-in they have, and
// no unit of its own. go test ./deploy -run TestCloudInitCarriesTheUnits
// -update rewrites them.
func TestCloudInitCarriesTheUnits(t *testing.T) {
	src := sourceUnits(t)
	c, raw := readCloudInit(t)
	want := withDropIns(src, c.enabled(t)...)
	if *update {
		var b strings.Builder
		for _, rel := range want {
			b.WriteString("  - path: " + units + rel + "\n    permissions: \"0644\"\n    content: |\n")
			for _, l := range strings.SplitAfter(strings.TrimSuffix(src[rel], "\n"), "\n") {
				if strings.TrimSpace(l) == "" {
					b.WriteString("\n")
					continue
				}
				b.WriteString("      " + l)
			}
			b.WriteString("\n")
		}
		if !unitBlock.Match(raw) {
			t.Fatal("cloud-init/lockstep.yaml has no '# BEGIN units from deploy/systemd' ... '# END' block to write")
		}
		loc := unitBlock.FindSubmatchIndex(raw) // the block's BEGIN line ends at loc[3], its END line starts at loc[4]
		out := append(append(append([]byte{}, raw[:loc[3]]...), b.String()...), raw[loc[4]:]...)
		if err := os.WriteFile("cloud-init/lockstep.yaml", out, 0o644); err != nil {
			t.Fatal(err)
		}
		c, _ = readCloudInit(t)
	}
	var got []string
	for _, f := range c.WriteFiles {
		rel, ok := strings.CutPrefix(f.Path, units)
		if !ok {
			continue
		}
		got = append(got, rel)
		s, found := src[rel]
		switch {
		case !found:
			t.Errorf("cloud-init writes %s, which deploy/systemd does not have: a unit of its own drifts", f.Path)
		case f.Content != s:
			t.Errorf("cloud-init's %s differs from deploy/systemd/%s (go test ./deploy -run TestCloudInitCarriesTheUnits -update)", f.Path, rel)
		}
		if f.Permissions != "0644" {
			t.Errorf("cloud-init writes %s with permissions %q, want 0644", f.Path, f.Permissions)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("cloud-init writes the units %v, want %v (what it enables, with their drop-ins)", got, want)
	}
}

// installUnits is the package's and the README's layout: the gate's own
// units in /usr/lib/systemd/system, the app's examples copied into
// /etc/systemd/system, the binary where the units run it.
func installUnits(t *testing.T, src map[string]string) string {
	t.Helper()
	root := systemdtest.NewRoot(t)
	for rel, s := range src {
		dir := units
		if strings.HasPrefix(rel, "lockstep-") && !strings.Contains(rel, "/") {
			dir = "/usr/lib/systemd/system/"
		}
		systemdtest.WriteFile(t, root, dir+rel, s, 0o644)
	}
	systemdtest.WriteFile(t, root, "/usr/local/bin/lockstep", "#!/bin/sh\nexit 0\n", 0o755)
	return root
}

// TestUnitsGateTheIngress: deploy/systemd, installed, verifies unit by
// unit, and systemd finds the ingress gated; every way of weakening it
// that an edit, a lost file or a copy could bring is caught, by systemd's
// own reading of the root.
func TestUnitsGateTheIngress(t *testing.T) {
	src := sourceUnits(t)
	root := installUnits(t, src)
	for rel := range src {
		if strings.Contains(rel, "/") {
			continue // a drop-in: verified with its unit
		}
		if err := systemdtest.Verify(root, rel); err != nil {
			t.Errorf("deploy/systemd/%s: %v", rel, err)
		}
	}
	if err := systemdtest.Gated(root, ingress, gate); err != nil {
		t.Fatalf("deploy/systemd installed: %v", err)
	}

	dropIn := ingress + ".d/lockstep.conf"
	gateDropIn := func(body string) func(map[string]string) {
		return func(m map[string]string) { m[gate+".d/weaken.conf"] = body }
	}
	for _, tt := range []struct {
		name   string
		change func(map[string]string)
		// notGated: systemd loads it all and the ingress can start
		// without the gate; otherwise systemd refuses the units.
		notGated bool
	}{
		{"the ingress without its drop-in (the archive before issue 35)", func(m map[string]string) { delete(m, dropIn) }, true},
		{"the drop-in in a directory systemd does not read", func(m map[string]string) {
			m["app-ingress.d/lockstep.conf"] = m[dropIn]
			delete(m, dropIn)
		}, true},
		{"the drop-in under a name systemd ignores", func(m map[string]string) {
			m[dropIn+".orig"] = m[dropIn]
			delete(m, dropIn)
		}, true},
		{"Wants= instead of Requires=", func(m map[string]string) {
			m[dropIn] = "[Unit]\nWants=lockstep-admit.service\nAfter=lockstep-admit.service\n"
		}, true},
		{"Requires= without After=: both start at once", func(m map[string]string) {
			m[dropIn] = "[Unit]\nRequires=lockstep-admit.service\n"
		}, true},
		{"After= without Requires=: ordered, not required", func(m map[string]string) {
			m[dropIn] = "[Unit]\nAfter=lockstep-admit.service\n"
		}, true},
		{"the dependency in the wrong section", func(m map[string]string) {
			m[dropIn] = "[Service]\nRequires=lockstep-admit.service\nAfter=lockstep-admit.service\n"
		}, true},
		{"the gate a simple service: its start ends before the check", gateDropIn("[Service]\nType=simple\n"), true},
		{"the gate skipped by a condition", gateDropIn("[Unit]\nConditionPathExists=/etc/lockstep/enabled\n"), true},
		{"the gate's failure ignored", gateDropIn("[Service]\nExecStart=\nExecStart=-/usr/local/bin/lockstep admit --timeout 60s\n"), true},
		{"a refusal taken for success", gateDropIn("[Service]\nSuccessExitStatus=1 3\n"), true},
		{"the gate not running lockstep admit", gateDropIn("[Service]\nExecStart=\nExecStart=/bin/sh -c true\n"), true},
		{"the gate missing", func(m map[string]string) { delete(m, gate) }, false},
		{"the gate masked", func(m map[string]string) { m[gate+".masked"] = "" }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := map[string]string{}
			for k, v := range src {
				m[k] = v
			}
			tt.change(m)
			root := installUnits(t, m)
			if _, masked := m[gate+".masked"]; masked {
				os.Remove(filepath.Join(root, "usr/lib/systemd/system", gate))
				if err := os.Symlink("/dev/null", filepath.Join(root, units, gate)); err != nil {
					t.Fatal(err)
				}
			}
			err := systemdtest.Gated(root, ingress, gate)
			t.Logf("refused: %v", err)
			switch {
			case err == nil:
				t.Errorf("systemd finds the ingress gated; want it refused")
			case tt.notGated && !errors.Is(err, systemdtest.ErrNotGated):
				t.Errorf("want systemd to load the units and the check to find them not gated, got: %v", err)
			case !tt.notGated && errors.Is(err, systemdtest.ErrNotGated):
				t.Errorf("want systemd itself to refuse the units, got: %v", err)
			}
		})
	}
}

// TestCloudInitGatesTheIngress materialises cloud-init's write_files into
// a scratch root, installs a binary where runcmd does, enables the units
// as runcmd does (systemctl --root enable), and has systemd judge them.
func TestCloudInitGatesTheIngress(t *testing.T) {
	c, _ := readCloudInit(t)
	root := systemdtest.NewRoot(t)
	var written []string
	for _, f := range c.WriteFiles {
		mode, err := strconv.ParseUint(f.Permissions, 8, 32)
		if err != nil {
			t.Fatalf("%s: permissions %q: %v", f.Path, f.Permissions, err)
		}
		systemdtest.WriteFile(t, root, f.Path, f.Content, os.FileMode(mode))
		if rel, ok := strings.CutPrefix(f.Path, units); ok && !strings.Contains(rel, "/") {
			written = append(written, rel)
		}
	}
	systemdtest.WriteFile(t, root, "/usr/local/bin/lockstep", "#!/bin/sh\nexit 0\n", 0o755)
	enable := append([]string{"--root=" + root, "enable"}, c.enabled(t)...)
	if out, err := exec.Command("systemctl", enable...).CombinedOutput(); err != nil {
		t.Fatalf("systemctl %s: %v\n%s", strings.Join(enable, " "), err, out)
	}
	for _, u := range c.enabled(t) {
		if out, err := exec.Command("systemctl", "--root="+root, "is-enabled", u).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "enabled" {
			t.Errorf("systemctl is-enabled %s = %q, %v", u, out, err)
		}
	}
	for _, u := range written {
		if err := systemdtest.Verify(root, u); err != nil {
			t.Errorf("cloud-init's %s: %v", u, err)
		}
	}
	if err := systemdtest.Gated(root, ingress, gate); err != nil {
		t.Errorf("cloud-init's units: %v", err)
	}
	// What boots: multi-user.target's transaction holds the ingress and the
	// gate it waits for.
	if err := systemdtest.Verify(root, "multi-user.target"); err != nil {
		t.Errorf("the boot target: %v", err)
	}
}
