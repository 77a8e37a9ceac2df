// Command gatecore links what a boot gate cannot do without and exits:
// the check, the runtimes it asks, the trusted state, the CDN check, keyed
// signature verification by sigstore/sigstore (not cosign) and the CLI
// framework; no AWS SDK (lifecycle hooks, target groups, S3 stores), no
// registry client, no cosign (bench/start.sh FLOORS=1).
package main

import (
	"os"

	_ "github.com/sigstore/sigstore/pkg/signature"
	_ "github.com/urfave/cli/v2"

	_ "github.com/lockstep-dev/lockstep/admission"
	_ "github.com/lockstep-dev/lockstep/admission/running"
	_ "github.com/lockstep-dev/lockstep/manifest/trusted"
	_ "github.com/lockstep-dev/lockstep/verify/cdn/cdngate"
)

func main() { os.Exit(0) }
