package admission_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/admission"
)

// TestCheckBoundedReferences (issue 35 item 9): a page that itself names
// 50,000 assets does not run the check into its deadline: it is refused
// at once as could-not-verify by the gate's own bound
// (too-many-references), no asset checked and no dependency blamed; and
// --max-closure counts only what the closure adds, so a page naming more
// assets than it, whose closure adds nothing, is admitted.
func TestCheckBoundedReferences(t *testing.T) {
	t.Run("a page naming 50,000 assets", func(t *testing.T) {
		files := make(map[string]string, 50000)
		var page strings.Builder
		for i := range 50000 {
			p := fmt.Sprintf("img/%05d.png", i)
			files[p] = p
			fmt.Fprintf(&page, `<img src="CDN/%s">`, p)
		}
		fx := newFixture(t, files, page.String())
		cfg := fx.config(amd64Conf.String())
		cfg.Timeout = 20 * time.Second
		fx.write(t)
		// Past the deadline the refusal would be dependency-unreachable: the
		// kind alone says the bound answered first.
		d := admission.Check(context.Background(), cfg)
		if got := kinds(d, admission.Refuse); len(got) != 1 || got[0] != admission.KindTooManyReferences || !d.Unverified {
			t.Fatalf("refusing kinds = %v (unverified %v), want too-many-references alone:\n%.2000s", got, d.Unverified, dump(d))
		}
		if fx.cdnHits != 0 || d.CDNChecked != 0 {
			t.Errorf("%d CDN requests (%d checks), want none", fx.cdnHits, d.CDNChecked)
		}
	})
	t.Run("every asset: the bound does not apply", func(t *testing.T) {
		files := map[string]string{"a.png": "a", "b.png": "b", "c.png": "c"}
		fx := newFixture(t, files, `<img src="CDN/a.png"><img src="CDN/b.png"><img src="CDN/c.png">`)
		cfg := fx.config(amd64Conf.String())
		cfg.MaxReferences, cfg.AllAssets = 2, true
		fx.write(t)
		if d := admission.Check(context.Background(), cfg); !d.Allowed || d.CDNChecked != 3 {
			t.Errorf("Allowed %v, CDNChecked %d, want 3:\n%s", d.Allowed, d.CDNChecked, dump(d))
		}
	})
	t.Run("the closure's bound counts what it adds, not the references", func(t *testing.T) {
		files := map[string]string{"a.png": "a", "b.png": "b", "c.png": "c", "d.png": "d"}
		fx := newFixture(t, files, `<img src="CDN/a.png"><img src="CDN/b.png"><img src="CDN/c.png"><img src="CDN/d.png">`)
		withGraph(fx)
		cfg := fx.config(amd64Conf.String())
		cfg.MaxClosure = 1
		fx.write(t)
		if d := admission.Check(context.Background(), cfg); !d.Allowed || d.CDNChecked != 4 || d.Closure == nil || d.Closure.Referenced != 4 {
			t.Errorf("Allowed %v, CDNChecked %d, Closure %+v; want 4 references checked:\n%s", d.Allowed, d.CDNChecked, d.Closure, dump(d))
		}
	})
}
