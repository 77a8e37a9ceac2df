package app

import (
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/transport"
)

// allowLinkLocalFlag lifts the gate's refusal to contact link-local and
// metadata addresses.
func allowLinkLocalFlag() cli.Flag {
	return &cli.BoolFlag{Name: "allow-link-local", Usage: "let the manifest URL, probes, CDN and agents be link-local or metadata addresses (169.254.0.0/16, fe80::/10, fd00:ec2::254), which are refused without it", EnvVars: []string{"LOCKSTEP_ALLOW_LINK_LOCAL"}}
}

// gateOptions are the rules of every request the probe, the agent and
// the fleet check send: never follow a redirect to another origin, and
// never contact a link-local or metadata address unless
// --allow-link-local.
func gateOptions(c *cli.Context) []transport.Option {
	opts := []transport.Option{transport.WithSameOriginRedirects()}
	if !c.Bool("allow-link-local") {
		opts = append(opts, transport.WithDeniedAddresses(transport.LinkLocal...))
	}
	return opts
}
