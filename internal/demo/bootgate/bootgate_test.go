package bootgate_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/internal/demo/bootgate"
	"github.com/lockstep-dev/lockstep/internal/testenv"
)

func TestRun(t *testing.T) {
	reg := testenv.Registry(t)
	dir := t.TempDir()
	cdn := testenv.Nginx(t, dir)
	var out bytes.Buffer
	if err := bootgate.Run(context.Background(), bootgate.Env{Registry: reg, CDNDir: dir, CDNBase: cdn + "/", Out: &out}); err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	s := out.String()
	for _, want := range []string{"boot gate 4/4", "ADMITTED", "REFUSED (exit 1)", "image-digest-mismatch", "asset-missing-on-cdn", "asset-not-in-manifest"} {
		if !strings.Contains(s, want) {
			t.Errorf("the demo does not say %q:\n%s", want, s)
		}
	}
	t.Log(s)
}
