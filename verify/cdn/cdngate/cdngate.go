package cdngate

import (
	"context"

	"github.com/lockstep-dev/lockstep/admission"
	"github.com/lockstep-dev/lockstep/verify/cdn"
)

// Checker checks assets with verify/cdn's Check: each path on every base,
// with the request's client and logger, and cdn's defaults for the rest
// (the manifest's origin compared with the CDN, strong ETags trusted).
// The zero value is ready.
type Checker struct{}

var _ admission.CDNChecker = Checker{}

// CheckAssets implements admission.CDNChecker. Its error is cdn.Check's: a
// check that could not start.
func (Checker) CheckAssets(ctx context.Context, req admission.CDNRequest) ([]admission.AssetStatus, error) {
	rep, err := cdn.Check(ctx, req.Assets, cdn.Options{Paths: req.Paths, Client: req.Client, Logger: req.Logger})
	if err != nil {
		return nil, err
	}
	out := make([]admission.AssetStatus, len(rep.Results))
	for i, r := range rep.Results {
		out[i] = admission.AssetStatus{Path: r.Path, URL: r.URL, Status: admission.CDNStatus(r.Status), Reason: r.Reason, Err: r.Err}
	}
	return out, nil
}
