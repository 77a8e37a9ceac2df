// Command gatenosig links what `lockstep admit` links but its signature
// verification (manifest/signature, verify/imagesig: cosign) and exits: the
// start of a gate-only build without cosign (bench/start.sh FLOORS=1).
package main

import (
	"os"

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

func main() { os.Exit(0) }
