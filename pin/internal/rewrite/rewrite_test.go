package rewrite

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verify/registry"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// pins are the images the golden tests pin.
func pins() Func {
	d := func(s string) manifest.Digest { return manifest.SHA256([]byte(s)) }
	return registry.Replacer([]manifest.Image{
		{Repository: "index.docker.io/library/nginx", Tag: "1.27", Digest: d("nginx")},
		{Repository: "index.docker.io/library/golang", Tag: "1.23", Digest: d("golang")},
		{Repository: "127.0.0.1:5000/app", Tag: "v1", Digest: d("app")},
		{Repository: "ghcr.io/acme/sidecar", Tag: "2.0", Digest: d("sidecar")},
		{Repository: "index.docker.io/library/alpine", Tag: "latest", Digest: d("alpine")},
	})
}

// TestGolden rewrites every file of testdata/in and compares the result,
// and the changes, with testdata/golden (refreshed with -update).
func TestGolden(t *testing.T) {
	ins, err := filepath.Glob("testdata/in/*")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range ins {
		t.Run(filepath.Base(in), func(t *testing.T) {
			f, err := Load(in)
			if err != nil {
				t.Fatal(err)
			}
			out, changes, err := f[0].Rewrite(pins())
			if err != nil {
				t.Fatal(err)
			}
			ch, _ := json.MarshalIndent(changes, "", "  ")
			golden := filepath.Join("testdata", "golden", filepath.Base(in))
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				os.WriteFile(golden, out, 0o644)
				os.WriteFile(golden+".changes.json", append(ch, '\n'), 0o644)
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("rewrite of %s differs from %s:\n%s", in, golden, out)
			}
			wantCh, _ := os.ReadFile(golden + ".changes.json")
			if !bytes.Equal(append(ch, '\n'), wantCh) {
				t.Errorf("changes of %s:\n%s\nwant\n%s", in, ch, wantCh)
			}
			// Only the references changed: every other line is the same.
			inData, _ := os.ReadFile(in)
			changed := map[int]bool{}
			for _, c := range changes {
				changed[c.Line] = true
			}
			a, b := strings.Split(string(inData), "\n"), strings.Split(string(out), "\n")
			if len(a) != len(b) {
				t.Fatalf("%d lines before, %d after", len(a), len(b))
			}
			for i := range a {
				if a[i] != b[i] && !changed[i+1] {
					t.Errorf("line %d changed without a change reported:\n-%s\n+%s", i+1, a[i], b[i])
				}
			}
			// A second rewrite changes nothing: pinning is idempotent.
			again, err := Parse(in, f[0].Format, out)
			if err != nil {
				t.Fatal(err)
			}
			if _, ch2, _ := again.Rewrite(pins()); len(ch2) != 0 {
				t.Errorf("a second rewrite changed %v", ch2)
			}
		})
	}
}

func TestRefs(t *testing.T) {
	f, err := Load("testdata/in/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(f[0].Refs(), " ")
	if want := "golang:1.23 127.0.0.1:5000/app:v1 nginx:1.27 redis:7"; got != want {
		t.Errorf("Refs = %s, want %s (no scratch, stages, variables or heredoc lines)", got, want)
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name, file, data string
		line             int
	}{
		{"yaml syntax", "k.yaml", "apiVersion: v1\nkind: Pod\nspec: [\n", 0},
		{"yaml of no known kind", "values.yaml", "replicas: 3\nimage: nginx\n", 1},
		{"yaml second document bad", "k.yaml", "apiVersion: v1\nkind: Pod\n---\n- a\n- b\n", 4},
		{"containers not a list", "k.yaml", "apiVersion: v1\nkind: Pod\nspec:\n  containers: nginx\n", 1},
		{"service not a mapping", "compose.yml", "services:\n  web: nginx\n", 1},
		{"plain scalar over two lines", "k.yaml", "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: nginx\n      :1.27\n", 5},
		{"json syntax", "t.json", "{\"containerDefinitions\": [}", 1},
		{"json trailing data", "t.json", "{\"containerDefinitions\": []} {}", 1},
		{"json not a task definition", "t.json", "{\"family\": \"web\"}", 0},
		{"json truncated", "t.json", "{\"containerDefinitions\": [{\"image\": \"x\"", 1},
		{"FROM without image", "Dockerfile", "FROM --platform=linux/amd64\n", 1},
		{"FROM with junk", "Dockerfile", "FROM alpine\nFROM nginx:1.27 AS\n", 2},
		{"FROM AS AS", "Dockerfile", "FROM nginx:1.27 stage\n", 1},
		{"unknown extension", "deploy.txt", "image: nginx", 0},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		path := filepath.Join(dir, tt.file)
		os.WriteFile(path, []byte(tt.data), 0o644)
		files, err := Load(path)
		var pe *ParseError
		if !errors.As(err, &pe) || !pe.InvalidInput() {
			t.Errorf("%s: Load(%q) = %v, %v; want a *ParseError", tt.name, tt.data, files, err)
			continue
		}
		if tt.line != 0 && pe.Line != tt.line {
			t.Errorf("%s: error %v at line %d, want line %d", tt.name, err, pe.Line, tt.line)
		}
		if got, _ := os.ReadFile(path); string(got) != tt.data {
			t.Errorf("%s: the file changed", tt.name)
		}
	}
}

func TestWriteIsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "compose.yaml")
	bad := filepath.Join(dir, "k8s.yaml")
	os.WriteFile(good, []byte("services:\n  web:\n    image: nginx:1.27\n"), 0o600)
	os.WriteFile(bad, []byte("apiVersion: v1\nkind: Pod\nspec: [\n"), 0o644)
	if _, err := Load(good, bad); err == nil {
		t.Fatal("Load of a good and a bad file succeeded")
	}
	files, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Write(files, pins())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || len(res[0].Changes) != 1 || res[0].Format != YAML {
		t.Fatalf("Write = %+v, want one change", res)
	}
	got, _ := os.ReadFile(good)
	if want := "services:\n  web:\n    image: nginx:1.27@" + manifest.SHA256([]byte("nginx")).String() + "\n"; string(got) != want {
		t.Errorf("compose.yaml =\n%s\nwant\n%s", got, want)
	}
	if fi, _ := os.Stat(good); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's 0600 kept", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// Through a symbolic link, the link stays and its target is rewritten.
	real := filepath.Join(dir, "real.yaml")
	link := filepath.Join(dir, "link.yaml")
	os.WriteFile(real, []byte("services:\n  web:\n    image: nginx:1.27\n"), 0o644)
	if err := os.Symlink("real.yaml", link); err != nil {
		t.Fatal(err)
	}
	files, err = Load(link)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(files, pins()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if got, _ := os.ReadFile(real); !strings.Contains(string(got), "@sha256:") {
		t.Errorf("the link's target was not rewritten:\n%s", got)
	}
}

func TestDetectFormat(t *testing.T) {
	for path, want := range map[string]Format{
		"Dockerfile": Dockerfile, "build/Containerfile": Dockerfile, "Dockerfile.prod": Dockerfile, "web.dockerfile": Dockerfile,
		"deploy.yaml": YAML, "docker-compose.yml": YAML, "task.json": ECS,
	} {
		if got, err := DetectFormat(path); got != want || err != nil {
			t.Errorf("DetectFormat(%s) = %s, %v; want %s", path, got, err, want)
		}
	}
}

func TestCRLF(t *testing.T) {
	for _, tt := range []struct{ file, in string }{
		{"k.yaml", "apiVersion: v1\r\nkind: Pod\r\nspec:\r\n  containers:\r\n  - name: a\r\n    image: nginx:1.27\r\n"},
		{"Dockerfile", "FROM nginx:1.27 AS a\r\nRUN true\r\n"},
		{"t.json", "{\r\n  \"containerDefinitions\": [{\"image\": \"nginx:1.27\"}]\r\n}\r\n"},
	} {
		f, err := Parse(tt.file, mustFormat(t, tt.file), []byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		out, changes, err := f.Rewrite(pins())
		if err != nil || len(changes) != 1 {
			t.Fatalf("%s: %v, %v", tt.file, changes, err)
		}
		want := strings.Replace(tt.in, "nginx:1.27", "nginx:1.27@"+manifest.SHA256([]byte("nginx")).String(), 1)
		if string(out) != want {
			t.Errorf("%s: CRLF rewrite =\n%q\nwant\n%q", tt.file, out, want)
		}
	}
}

func mustFormat(t *testing.T, path string) Format {
	t.Helper()
	f, err := DetectFormat(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestYAMLOrderAndAliases: containers before initContainers, and a
// container reached through an alias, are rewritten once each, in place.
func TestYAMLOrderAndAliases(t *testing.T) {
	in := `apiVersion: v1
kind: Pod
spec:
  containers:
  - &main {name: main, image: nginx:1.27}
  - name: side
    image: ghcr.io/acme/sidecar:2.0
  initContainers:
  - name: init
    image: 127.0.0.1:5000/app:v1
  ephemeralContainers:
  - *main
---
services:
  a: &svc
    image: nginx:1.27
  b: *svc
`
	f, err := Parse("k.yaml", YAML, []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, changes, err := f.Rewrite(pins())
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 4 {
		t.Errorf("changes = %+v, want 4 (each node once)", changes)
	}
	again, err := Parse("k.yaml", YAML, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range again.Refs() {
		if !strings.Contains(r, "@sha256:") {
			t.Errorf("%s left unpinned in\n%s", r, out)
		}
	}
	if !strings.Contains(string(out), "- *main\n") || !strings.Contains(string(out), "b: *svc\n") {
		t.Errorf("aliases not kept:\n%s", out)
	}
}
