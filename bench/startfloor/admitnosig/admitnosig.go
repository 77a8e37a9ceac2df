// Package admitnosig links what `lockstep admit` links but its signature
// verification (manifest/signature, verify/imagesig: cosign), and nothing
// else: the one list that the floor programs gate and gatenosig share, so
// that a package admit comes to link is added to both at once.
package admitnosig

import (
	_ "github.com/aws/aws-sdk-go-v2/config"
	_ "github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	_ "github.com/aws/aws-sdk-go-v2/service/autoscaling"
	_ "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	_ "github.com/google/go-containerregistry/pkg/authn"
	_ "github.com/google/go-containerregistry/pkg/v1/remote"
	_ "github.com/urfave/cli/v2"

	_ "github.com/lockstep-dev/lockstep/admission"
	_ "github.com/lockstep-dev/lockstep/admission/gate"
	_ "github.com/lockstep-dev/lockstep/admission/running"
	_ "github.com/lockstep-dev/lockstep/manifest/filestore"
	_ "github.com/lockstep-dev/lockstep/manifest/s3store"
	_ "github.com/lockstep-dev/lockstep/manifest/trusted"
	_ "github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)
