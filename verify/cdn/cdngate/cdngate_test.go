package cdngate

import (
	"testing"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/verify/cdn"
)

// TestStatuses: every status the gate tells apart has verify/cdn's value,
// so the conversion in CheckAssets keeps each one (a renamed status would
// otherwise become a could-not-check refusal, silently).
func TestStatuses(t *testing.T) {
	for _, tc := range []struct {
		gate admission.CDNStatus
		cdn  cdn.Status
	}{
		{admission.CDNOK, cdn.StatusOK},
		{admission.CDNMissing, cdn.StatusMissing},
		{admission.CDNWrongSize, cdn.StatusWrongSize},
		{admission.CDNWrongContent, cdn.StatusWrongContent},
		{admission.CDNLoop, cdn.StatusLoop},
		{admission.CDNTLS, cdn.StatusTLS},
	} {
		if string(tc.gate) != string(tc.cdn) {
			t.Errorf("admission status %q, verify/cdn status %q: want the same value", tc.gate, tc.cdn)
		}
	}
}
