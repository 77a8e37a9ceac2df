package record

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/assets"
)

// TestManifestServed: InstancePaths and CDNPaths say which files the
// instance serves, and a pattern or folder that names nothing, or a bad
// one, is refused before anything is written.
func TestManifestServed(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"index.html", "index.txt", "favicon.ico", "ngsw.json", "_next/static/app-1a2b3c4d5e6f.js", "assets/logo.svg"} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := Options{Release: "web", Generation: 1, CDN: []string{"https://cdn.example/"}, Getenv: env(nil), Assets: assets.Options{Dir: dir}}
	for _, tc := range []struct {
		name                    string
		instance, cdnDirs, both []string
		want                    string // the paths on the instance, space-separated (+ for both)
		field                   string // a refusal's field, else ""
	}{
		{name: "none: every file on the CDN, v1 or v2", want: ""},
		{name: "a name pattern and a path", instance: []string{"ngsw.json", "index.*"}, want: "index.html index.txt ngsw.json"},
		{name: "a folder pattern takes what is under it", instance: []string{"assets"}, want: "assets/logo.svg"},
		{name: "the CDN serves only _next/", cdnDirs: []string{"/_next/"}, want: "assets/logo.svg favicon.ico index.html index.txt ngsw.json"},
		{name: "an instance pattern wins inside a CDN folder", instance: []string{"app-*.js"}, cdnDirs: []string{"_next", "assets"},
			want: "_next/static/app-1a2b3c4d5e6f.js favicon.ico index.html index.txt ngsw.json"},
		{name: "the app shell on both, the service worker's manifest on the instance", both: []string{"index.html", "*.js"}, instance: []string{"ngsw.json", "index.html"},
			want: "+_next/static/app-1a2b3c4d5e6f.js +index.html ngsw.json"},
		{name: "a both pattern that matches nothing", both: []string{"main-*.js"}, field: "assets.files.served"},
		{name: "a pattern that matches nothing (a typo)", instance: []string{"ngws.json"}, field: "assets.files.served"},
		{name: "a folder that holds nothing", cdnDirs: []string{"static"}, field: "assets.files.served"},
		{name: "a bad pattern", instance: []string{"[a"}, field: "assets.files.served"},
		{name: "a folder that leaves the directory", cdnDirs: []string{"../x"}, field: "assets.files.served"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := base
			opts.InstancePaths, opts.CDNPaths, opts.CDNAndInstancePaths = tc.instance, tc.cdnDirs, tc.both
			m, err := Manifest(context.Background(), opts)
			if tc.field != "" {
				var ve *manifest.ValidationError
				if !errors.As(err, &ve) || ve.Field != tc.field {
					t.Fatalf("Manifest = %v, want a ValidationError for %s", err, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range m.Assets.Files {
				switch f.Served {
				case manifest.ServedInstance:
					got = append(got, f.Path)
				case manifest.ServedCDNAndInstance:
					got = append(got, "+"+f.Path)
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("on the instance: %q, want %q", strings.Join(got, " "), tc.want)
			}
			if want := tc.want != ""; (m.APIVersion == manifest.APIVersionV3) != want {
				t.Errorf("apiVersion %s with files on the instance: %v", m.APIVersion, want)
			}
		})
	}
}
