package cdn

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/verdict"
)

// assetTree writes n generated files under a fresh directory and returns
// it with their contents by path. Their names carry a content-hash-like
// part, as a bundler's do, so that a check compares them by headers (a
// name without one is compared by its bytes).
func assetTree(t testing.TB, n int) (string, map[string]string) {
	t.Helper()
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	files := map[string]string{}
	for i := range n {
		p := fmt.Sprintf("static/%02d/app-%04d.%08x.js", i%10, i, i)
		b := make([]byte, 100+rng.IntN(4000))
		for j := range b {
			b[j] = byte('a' + rng.IntN(26))
		}
		files[p] = string(b)
		write(t, root, p, string(b))
	}
	return root, files
}

func write(t testing.TB, root, p, content string) {
	t.Helper()
	full := filepath.Join(root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNginx checks a generated tree served by a real nginx on loopback.
func TestNginx(t *testing.T) {
	root, files := assetTree(t, 40)
	a := assets(files) // recorded before the CDN changes below
	const missing, swapped, stated = "static/03/app-0003.00000003.js", "static/05/app-0005.00000005.js", "static/07/app-0007.00000007.js"
	if err := os.Remove(filepath.Join(root, missing)); err != nil {
		t.Fatal(err)
	}
	// The same size, other bytes: only --full or a checksum header tells.
	write(t, root, swapped, strings.ToUpper(files[swapped]))
	write(t, root, stated, strings.ToUpper(files[stated]))
	statedHeader := fmt.Sprintf(`location = /%s { add_header x-amz-checksum-sha256 "%s"; }`, stated, sha64(strings.ToUpper(files[stated])))
	goodHeader := fmt.Sprintf(`location = /static/00/app-0000.00000000.js { add_header Repr-Digest "sha-256=:%s:"; }`, sha64(files["static/00/app-0000.00000000.js"]))

	plain := testenv.Nginx(t, root, statedHeader, goodHeader)
	// S3 behind CloudFront: every missing object is a 403.
	forbids := testenv.Nginx(t, root, `location / { try_files $uri =403; }`)
	// A CDN that refuses HEAD: the check asks for the first byte instead.
	noHead := testenv.Nginx(t, root, `if ($request_method = HEAD) { return 405; }`)

	check := func(t *testing.T, a manifest.Assets, full bool) *Report {
		t.Helper()
		rep, err := Check(context.Background(), a, Options{Full: full, Concurrency: 8})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	t.Run("all present", func(t *testing.T) {
		ok := assets(map[string]string{"static/00/app-0000.00000000.js": files["static/00/app-0000.00000000.js"], "static/01/app-0001.00000001.js": files["static/01/app-0001.00000001.js"]}, plain, forbids, noHead)
		for _, full := range []bool{false, true} {
			rep := check(t, ok, full)
			if rep.Err() != nil || rep.Summary.OK != 6 {
				t.Errorf("full=%v: %v, %+v", full, rep.Err(), rep.Summary)
			}
			if r := rep.Results[0]; !full && (r.URL != plain+"/static/00/app-0000.00000000.js" || strings.Join(r.Verified, ",") != "repr-digest") {
				t.Errorf("Repr-Digest from add_header: %s verified by %v, want repr-digest", r.URL, r.Verified)
			}
		}
	})
	for _, tc := range []struct {
		name, base string
		full       bool
		want       map[string]Status
	}{
		{"HEAD", plain, false, map[string]Status{missing: StatusMissing, swapped: StatusOK, stated: StatusWrongContent}},
		{"full", plain, true, map[string]Status{missing: StatusMissing, swapped: StatusWrongContent, stated: StatusWrongContent}},
		{"403 for missing", forbids, false, map[string]Status{missing: StatusMissing, swapped: StatusOK, stated: StatusOK}},
		{"HEAD refused", noHead, false, map[string]Status{missing: StatusMissing, swapped: StatusOK, stated: StatusOK}},
		{"HEAD refused, full", noHead, true, map[string]Status{missing: StatusMissing, swapped: StatusWrongContent, stated: StatusWrongContent}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := a
			b.CDN = []string{tc.base}
			rep := check(t, b, tc.full)
			bad := 0
			for _, r := range rep.Results {
				want, special := tc.want[r.Path]
				if !special {
					want = StatusOK
				}
				if want != StatusOK {
					bad++
				}
				if r.Status != want {
					t.Errorf("%s: %s (%d %q via %s), want %s", r.Path, r.Status, r.HTTPStatus, r.Reason, r.Method, want)
				}
			}
			if !verdict.IsMismatch(rep.Err()) || rep.Summary.Checked != 40 || rep.Summary.OK != 40-bad {
				t.Errorf("Err() = %v, summary %+v", rep.Err(), rep.Summary)
			}
			if tc.base == forbids {
				if r := byPath(rep)[missing]; r.HTTPStatus != 403 {
					t.Errorf("missing behind the 403 CDN: HTTP %d, want 403", r.HTTPStatus)
				}
			}
		})
	}
}
