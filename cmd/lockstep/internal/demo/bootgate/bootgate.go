// Package bootgate is the boot-gate part of `lockstep demo`: the instances
// of the Epic 2021 scenario. Each instance is started on loopback as a
// fresh machine would have it: its app (an HTTP server serving its page),
// its Docker daemon (a Docker Engine API on a unix socket reporting the
// image it pulled) and its own trusted state ([Instances]); then its boot
// gate is the real `lockstep admit --store URL --release NAME --key PUB`,
// run through the demo's runner, which reads the release from the store
// and verifies its signature with the release's public key. An instance of
// the re-pushed tag must be refused with image-digest-mismatch,
// asset-not-in-manifest and asset-missing-on-cdn ([Refused]).
package bootgate

import (
	"errors"
	"fmt"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/internal/fixture/scenario"
)

// NewAssetBody is the asset the re-pushed build serves, and NewAssetID
// its content-addressed ID.
const NewAssetBody = "console.log('built again, by the re-push')"

// NewAssetID is the ID of NewAssetBody, which v1 never recorded.
var NewAssetID = scenario.ID("js/app.js", NewAssetBody)

// RefusalKinds are the findings the re-pushed instance must be refused
// with.
var RefusalKinds = []admission.Kind{admission.KindImageDigestMismatch, admission.KindAssetNotInManifest, admission.KindAssetMissingOnCDN}

// Refused returns an error unless d refuses the re-pushed instance with
// every one of RefusalKinds.
func Refused(d admission.Decision) error {
	if d.Allowed {
		return errors.New("the re-pushed instance was admitted")
	}
	for _, k := range RefusalKinds {
		if !d.Has(k) {
			return fmt.Errorf("the re-pushed instance was refused without %s", k)
		}
	}
	return nil
}
