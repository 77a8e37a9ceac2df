package app_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
)

// TestServedNextjsFixture deploys the real Next.js static export
// (testdata/web/nextjs: assetPrefix https://cdn.example.test/next, here
// rewritten to a loopback nginx) split as Next.js means it: a real nginx
// CDN that holds only _next/ under /next/, a real nginx instance that
// serves the pages, the RSC payloads and public/ files. record --cdn-path
// _next says so; a default admit of the app router's and the pages
// router's pages admits the correct split, and refuses a deleted
// public/ file (on the instance) and a deleted chunk that only the pages
// router's _buildManifest.js names (on the CDN).
func TestServedNextjsFixture(t *testing.T) {
	src := filepath.Join("..", "..", "..", "testdata", "web", "nextjs", "dist")
	build, cdnDir, instDir := t.TempDir(), t.TempDir(), t.TempDir()
	cdn := testenv.Nginx(t, cdnDir)
	inst := testenv.Nginx(t, instDir, `location / { try_files $uri $uri.html $uri/ =404; }`)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte("https://cdn.example.test/next"), []byte(cdn+"/next"))
		writeFile(t, filepath.Join(build, rel), string(b))
		if strings.HasPrefix(filepath.ToSlash(rel), "_next/") {
			writeFile(t, filepath.Join(cdnDir, "next", rel), string(b))
		} else {
			writeFile(t, filepath.Join(instDir, rel), string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "release.json")
	if code, _, stderr := run(t, "record", "--release", "store-web", "--generation", "4", "--assets", build,
		"--cdn", cdn+"/next/", "--cdn-path", "_next", "--output", out); code != 0 {
		t.Fatalf("record: exit %d\n%s", code, stderr)
	}
	m, _, err := manifest.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	im, conf := webImage()
	m.Images = []manifest.Image{im}
	m.APIVersion = m.Version()
	raw, err := m.Indent()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, out, string(raw))
	e := servedEnv{config: conf}

	const pagesChunk = "_next/static/chunks/1qtjvhdg3bxf_.js" // /docs/setup's, named only by _buildManifest.js
	for _, tc := range []struct {
		name          string
		dir, path     string // deleted, under dir
		code          int
		kind          admission.Kind
		subject, want string
	}{
		{name: "the correct split deployment is admitted", code: 0},
		{name: "a public/ file the page shows deleted from the instance", dir: instDir, path: "tile.png",
			code: 1, kind: admission.KindAssetMissingOnInstance, subject: "tile.png", want: "instance"},
		{name: "a pages-router chunk only _buildManifest.js names deleted from the CDN", dir: filepath.Join(cdnDir, "next"), path: pagesChunk,
			code: 1, kind: admission.KindAssetMissingOnCDN, subject: pagesChunk, want: "CDN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path != "" {
				p := filepath.Join(tc.dir, filepath.FromSlash(tc.path))
				body, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { writeFile(t, p, string(body)) })
			}
			code, d, state := e.admit(t, out, "--probe", inst+"/", "--probe", inst+"/docs")
			var refusing []admission.Finding
			for _, f := range d.Findings {
				if f.Severity == admission.Refuse {
					refusing = append(refusing, f)
				}
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d; findings %+v", code, tc.code, refusing)
			}
			if written := stateWritten(t, state); written != (tc.code == 0) {
				t.Errorf("trusted state written: %v, want %v", written, tc.code == 0)
			}
			if tc.code == 0 {
				if d.InstanceChecked == 0 || d.CDNChecked == 0 {
					t.Errorf("admitted with %d checks on the instance and %d on the CDN, want both", d.InstanceChecked, d.CDNChecked)
				}
				return
			}
			for _, f := range refusing {
				if f.Kind == tc.kind && f.Subject == tc.subject && strings.Contains(f.Message, tc.want) {
					return
				}
			}
			t.Errorf("no %s finding for %s on the %s; findings %+v", tc.kind, tc.subject, tc.want, refusing)
		})
	}
}
