package cdn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/testkit/testenv"
	"github.com/lockstep-dev/lockstep/verdict"
)

// TestCompared checks on a real nginx what each check compared: nginx
// states no checksum, so a HEAD compares the size alone, except where a
// header states the SHA-256; a name without a content hash (index.html,
// robots.txt) is compared by its bytes all the same; --full compares the
// bytes of all; RequireContent makes size only "not verified" (exit 3),
// never "ok".
func TestCompared(t *testing.T) {
	files := map[string]string{"index.html": "<html>", "robots.txt": "User-agent: *", "app-B4TPZJfM.js": "console.log(1)",
		"logo-63uT0M3t.svg": "<svg/>", "style-Cu73fR1L.css": "a{}"}
	root := t.TempDir()
	for p, c := range files {
		write(t, root, p, c)
	}
	header := fmt.Sprintf(`location = /app-B4TPZJfM.js { add_header x-amz-checksum-sha256 "%s"; }`, sha64(files["app-B4TPZJfM.js"]))
	base := testenv.Nginx(t, root, header)
	a := assets(files, base)

	for _, tc := range []struct {
		name          string
		opt           Options
		want          map[string]string // path → Compared
		sizeOnly      int
		status        Status // of the size-only checks
		unavailable   bool
		text, notText string
	}{
		{name: "headers", want: map[string]string{"app-B4TPZJfM.js": ComparedChecksum, "index.html": ComparedBytes, "robots.txt": ComparedBytes,
			"logo-63uT0M3t.svg": ComparedSize, "style-Cu73fR1L.css": ComparedSize},
			sizeOnly: 2, status: StatusOK, text: "2 ok by size only"},
		{name: "full", opt: Options{Full: true}, want: map[string]string{"app-B4TPZJfM.js": ComparedBytes, "index.html": ComparedBytes, "robots.txt": ComparedBytes,
			"logo-63uT0M3t.svg": ComparedBytes, "style-Cu73fR1L.css": ComparedBytes},
			status: StatusOK, notText: "by size only ("},
		{name: "require content", opt: Options{RequireContent: true}, want: map[string]string{"app-B4TPZJfM.js": ComparedChecksum, "index.html": ComparedBytes,
			"robots.txt": ComparedBytes, "logo-63uT0M3t.svg": ComparedSize, "style-Cu73fR1L.css": ComparedSize},
			sizeOnly: 2, status: StatusSizeOnly, unavailable: true, text: "NOT VERIFIED"},
		{name: "require content, full", opt: Options{RequireContent: true, Full: true}, want: map[string]string{"app-B4TPZJfM.js": ComparedBytes,
			"index.html": ComparedBytes, "robots.txt": ComparedBytes, "logo-63uT0M3t.svg": ComparedBytes, "style-Cu73fR1L.css": ComparedBytes},
			status: StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Check(context.Background(), a, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			for p, res := range byPath(rep) {
				if res.Compared != tc.want[p] {
					t.Errorf("%s compared %q, want %q", p, res.Compared, tc.want[p])
				}
				if res.Compared == ComparedSize && res.Status != tc.status {
					t.Errorf("%s (size only): status %s, want %s", p, res.Status, tc.status)
				}
			}
			if rep.Summary.SizeOnly != tc.sizeOnly {
				t.Errorf("summary: %d by size only, want %d (%+v)", rep.Summary.SizeOnly, tc.sizeOnly, rep.Summary)
			}
			var ue *verdict.UnavailableError
			if got := errors.As(rep.Err(), &ue); got != tc.unavailable {
				t.Errorf("Err() = %v; want unavailable %v", rep.Err(), tc.unavailable)
			}
			if verdict.IsMismatch(rep.Err()) {
				t.Errorf("size only is reported as a mismatch: %v", rep.Err())
			}
			var b bytes.Buffer
			if err := rep.Write(&b, "text", "test"); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), fmt.Sprintf("%d by size only", tc.sizeOnly)) ||
				(tc.text != "" && !strings.Contains(b.String(), tc.text)) || (tc.notText != "" && strings.Contains(b.String(), tc.notText)) {
				t.Errorf("text report lacks %q or has %q:\n%s", tc.text, tc.notText, b.String())
			}
		})
	}
}
