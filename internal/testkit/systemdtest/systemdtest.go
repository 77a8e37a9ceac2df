package systemdtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
)

// OSCommands are the commands the example units run that come with the
// operating system, not with lockstep: NewRoot puts an executable stub at
// each, as a machine with those packages installed has them.
var OSCommands = []string{"/usr/bin/docker", "/usr/bin/socat", "/bin/sh"}

// NewRoot returns a scratch system root (a temporary directory) holding
// what an instance has before lockstep is installed: systemd's own units
// (the host's targets and slices, which every service orders against),
// the stubs of OSCommands and a docker.service. It needs systemd-analyze
// (skipped without it; failed under LOCKSTEP_INTEGRATION=1).
func NewRoot(t testing.TB) string {
	t.Helper()
	testenv.Require(t, "systemd-analyze")
	root := t.TempDir()
	units := filepath.Join(root, "usr/lib/systemd/system")
	if err := os.MkdirAll(units, 0o755); err != nil {
		t.Fatal(err)
	}
	var copied int
	for _, dir := range []string{"/usr/lib/systemd/system", "/lib/systemd/system"} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if ext := path.Ext(e.Name()); ext != ".target" && ext != ".slice" {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				continue // a dangling link (a masked target): not needed
			}
			if err := os.WriteFile(filepath.Join(units, e.Name()), raw, 0o644); err != nil {
				t.Fatal(err)
			}
			copied++
		}
	}
	if copied == 0 {
		t.Fatal("the host has no systemd units (/usr/lib/systemd/system/*.target) to build a root from")
	}
	for _, c := range OSCommands {
		WriteFile(t, root, c, "#!/bin/sh\nexit 0\n", 0o755)
	}
	WriteFile(t, root, "/usr/lib/systemd/system/docker.service", "[Unit]\nDescription=Docker (stub)\n[Service]\nExecStart=/usr/bin/docker\n", 0o644)
	return root
}

// WriteFile writes a file at the absolute path name inside root, making
// its directories.
func WriteFile(t testing.TB, root, name, content string, mode fs.FileMode) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// CopyTree copies the regular files and symbolic links under src to dst,
// keeping their relative paths, modes and link targets (an absolute
// target names a path of the root dst is part of, as in a package).
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
				return err
			}
			os.Remove(filepath.Join(dst, rel))
			return os.Symlink(target, filepath.Join(dst, rel))
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), raw, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Verify runs systemd-analyze verify on units (names, as systemd finds
// them in root's unit directories): each must load, its commands must be
// executable in root, and its start transaction must be buildable (every
// unit it requires exists and is not masked). The error carries
// systemd's output.
func Verify(root string, units ...string) error {
	_, _, err := analyze(root, false, units...)
	return err
}

func analyze(root string, debug bool, units ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "systemd-analyze", append([]string{"verify", "--root=" + root, "--man=no", "--generators=no"}, units...)...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SYSTEMD_") {
			env = append(env, kv)
		}
	}
	env = append(env, "SYSTEMD_LOG_COLOR=0")
	if debug {
		env = append(env, "SYSTEMD_LOG_LEVEL=debug")
	}
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		out := e.String()
		if debug { // only systemd's complaints, not its debug log
			out = complaints(out)
		}
		return o.String(), e.String(), fmt.Errorf("systemd-analyze verify --root=%s %s: %w\n%s", root, strings.Join(units, " "), err, out)
	}
	return o.String(), e.String(), nil
}

// complaints keeps the lines of a debug log that name what failed.
func complaints(log string) string {
	var keep []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "Failed") || strings.Contains(l, "not found") || strings.Contains(l, "not executable") ||
			strings.Contains(l, "masked") || strings.Contains(l, "Invalid") || strings.Contains(l, "bad-setting") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// Unit is what systemd loaded for a unit, from its own dump.
type Unit struct {
	Name string
	// Files are the fragment and the drop-ins systemd applied, in its
	// order, as paths on this machine (inside the root).
	Files []string
	// Deps are the unit's dependencies by kind (Requires, BindsTo,
	// Requisite, Wants, After, Before, ...), whatever declared them: the
	// unit file, a drop-in, or systemd's defaults.
	Deps map[string][]string
	// Props are the other settings of the dump ("Type": "oneshot";
	// conditions as "ConditionPathExists": "/etc/x untested").
	Props map[string][]string
	// Exec are the command lines by kind ("ExecStart").
	Exec map[string][]string
	// StartJobs are the units whose start jobs starting this one
	// installs (its start transaction), itself included.
	StartJobs []string
}

var depKinds = []string{"Requires", "Requisite", "Wants", "BindsTo", "PartOf", "Upholds", "Conflicts", "Before", "After",
	"OnFailure", "OnSuccess", "PropagatesReloadTo", "ReloadPropagatedFrom", "PropagatesStopTo", "StopPropagatedFrom", "JoinsNamespaceOf"}

var jobLine = regexp.MustCompile(`(?m)^(\S+): Installed new job (\S+)/start as [0-9]+$`)

// Load loads the unit name in root as systemd does and returns what
// systemd made of it, or an error (with systemd's complaints) when it does
// not verify.
func Load(root, name string) (*Unit, error) {
	stdout, stderr, err := analyze(root, true, name)
	if err != nil {
		return nil, err
	}
	u := &Unit{Name: name, Deps: map[string][]string{}, Props: map[string][]string{}, Exec: map[string][]string{}}
	var in bool
	var exec string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if unit, ok := strings.CutPrefix(line, "-> Unit "); ok {
			in = strings.TrimSuffix(unit, ":") == name
			exec = ""
			continue
		}
		if !in {
			continue
		}
		if kind, ok := strings.CutPrefix(line, "-> "); ok {
			exec = strings.TrimSuffix(kind, ":")
			continue
		}
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch {
		case key == "Command Line" && exec != "":
			u.Exec[exec] = append(u.Exec[exec], value)
		case key == "Fragment Path" || key == "DropIn Path":
			u.Files = append(u.Files, value)
		case slices.Contains(depKinds, key):
			dep, _, _ := strings.Cut(value, " ")
			u.Deps[key] = append(u.Deps[key], dep)
		default:
			u.Props[key] = append(u.Props[key], value)
		}
	}
	if len(u.Files) == 0 {
		return nil, fmt.Errorf("systemd loaded no file for %s in %s (no dump of it)", name, root)
	}
	for _, m := range jobLine.FindAllStringSubmatch(stderr, -1) {
		u.StartJobs = append(u.StartJobs, m[2])
	}
	return u, nil
}

// Service reads the [Service] settings of the files systemd applied to u,
// in systemd's order: an empty assignment resets a list, as systemd does.
// (The dump omits some settings, such as SuccessExitStatus and the
// prefixes of command lines; systemd chose the files, this reads them.)
func (u *Unit) Service() (map[string][]string, error) {
	set := map[string][]string{}
	for _, f := range u.Files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var section string
		lines := strings.Split(strings.ReplaceAll(string(raw), "\\\n", " "), "\n")
		for _, l := range lines {
			l = strings.TrimSpace(l)
			if l == "" || l[0] == '#' || l[0] == ';' {
				continue
			}
			if l[0] == '[' {
				section = strings.Trim(l, "[]")
				continue
			}
			k, v, ok := strings.Cut(l, "=")
			if !ok || section != "Service" {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if v == "" {
				delete(set, k)
				continue
			}
			set[k] = append(set[k], v)
		}
	}
	return set, nil
}

// ErrNotGated is the error Gated returns, wrapped with the reason.
var ErrNotGated = errors.New("not gated")

// Gated reports whether systemd, reading root, can start unit only once
// gate has run and exited 0: unit Requires= (or BindsTo=) gate and is
// ordered After= it, starting unit starts gate, and gate is a oneshot
// service (its start ends when its command exits) running lockstep admit,
// with no condition that could skip it (a skipped unit counts as started),
// no command whose failure is ignored ("-") and no other exit status taken
// for success. It returns nil, or ErrNotGated wrapped with the first
// reason, or systemd's complaint when a unit does not verify.
func Gated(root, unit, gate string) error {
	u, err := Load(root, unit)
	if err != nil {
		return err
	}
	g, err := Load(root, gate)
	if err != nil {
		return err
	}
	if !slices.Contains(u.Deps["Requires"], gate) && !slices.Contains(u.Deps["BindsTo"], gate) {
		return fmt.Errorf("%w: %s does not require %s (Requires=%v BindsTo=%v; systemd read %v)", ErrNotGated, unit, gate, u.Deps["Requires"], u.Deps["BindsTo"], u.Files)
	}
	if !slices.Contains(u.Deps["After"], gate) {
		return fmt.Errorf("%w: %s is not ordered after %s: both start at once (After=%v)", ErrNotGated, unit, gate, u.Deps["After"])
	}
	if !slices.Contains(u.StartJobs, gate) {
		return fmt.Errorf("%w: starting %s does not start %s (its transaction: %v)", ErrNotGated, unit, gate, u.StartJobs)
	}
	if t := g.Props["Type"]; !slices.Equal(t, []string{"oneshot"}) {
		return fmt.Errorf("%w: %s is Type=%v, not oneshot: its start ends before the check does", ErrNotGated, gate, t)
	}
	for k, v := range g.Props {
		if strings.HasPrefix(k, "Condition") {
			return fmt.Errorf("%w: %s has %s=%v: a condition that fails skips the gate, and a skipped unit counts as started", ErrNotGated, gate, k, v)
		}
	}
	svc, err := g.Service()
	if err != nil {
		return err
	}
	if v := svc["SuccessExitStatus"]; len(v) > 0 {
		return fmt.Errorf("%w: %s takes exit status %v for success: a refusal (1) or could-not-verify (3) must fail it", ErrNotGated, gate, v)
	}
	for _, kind := range []string{"ExecStart", "ExecStartPost"} {
		for _, c := range svc[kind] {
			if prefix := c[:len(c)-len(strings.TrimLeft(c, "@-:+!"))]; strings.Contains(prefix, "-") {
				return fmt.Errorf("%w: %s's %s=%s ignores the command's failure", ErrNotGated, gate, kind, c)
			}
		}
	}
	starts := g.Exec["ExecStart"]
	if len(starts) == 0 {
		return fmt.Errorf("%w: %s has no ExecStart", ErrNotGated, gate)
	}
	for _, c := range starts {
		f := strings.Fields(c)
		if len(f) < 2 || path.Base(f[0]) != "lockstep" || f[1] != "admit" {
			return fmt.Errorf("%w: %s runs %q, not lockstep admit", ErrNotGated, gate, c)
		}
	}
	return nil
}

// envGenerator is systemd's environment.d generator: it reads
// environment.d files with the parser EnvironmentFile= uses
// (load_env_file_pairs) and prints the environment it makes.
const envGenerator = "/usr/lib/systemd/user-environment-generators/30-systemd-environment-d-generator"

// LoadEnvFile reads content as systemd reads an environment file
// (EnvironmentFile=), with systemd's own parser, offline: it puts it in a
// scratch environment.d and runs systemd's environment.d generator, which
// uses the same parser, and returns the variables of content whose names
// start with prefix. environment.d also expands $VAR and ${VAR}, which
// EnvironmentFile= does not: content with a "$" is refused, so that the
// difference cannot matter. It needs the generator (systemd 246 or later):
// skipped without it, failed under LOCKSTEP_INTEGRATION=1.
func LoadEnvFile(t testing.TB, content, prefix string) map[string]string {
	t.Helper()
	if strings.Contains(content, "$") {
		t.Fatalf("an environment file with a $, which environment.d would expand and EnvironmentFile= does not:\n%s", content)
	}
	if _, err := os.Stat(envGenerator); err != nil {
		testenv.Require(t, envGenerator)
	}
	home := t.TempDir()
	WriteFile(t, home, "/environment.d/50-lockstep.conf", content, 0o644)
	cmd := exec.Command(envGenerator)
	cmd.Env = []string{"XDG_CONFIG_HOME=" + home}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("systemd's environment.d generator: %v\n%s", err, stderr.String())
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.HasPrefix(k, prefix) {
			continue
		}
		env[k] = unquote(t, v)
	}
	return env
}

// unquote undoes the generator's quoting of a value that needs it: C
// escapes in double quotes ("s3://r/l\t# where", "a\"b").
func unquote(t testing.TB, v string) string {
	t.Helper()
	if !strings.HasPrefix(v, `"`) {
		return v
	}
	u, err := strconv.Unquote(v)
	if err != nil {
		t.Fatalf("the environment.d generator's value %s: %v", v, err)
	}
	return u
}
