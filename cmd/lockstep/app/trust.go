package app

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/manifest"
)

// trustFlags are the flags every consumer of a manifest takes to decide
// whom to trust.
func trustFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "key", Usage: "the public key (PEM, cosign.pub) that must have signed the manifest", EnvVars: []string{"LOCKSTEP_KEY"}},
		&cli.StringFlag{Name: "certificate-identity", Usage: "keyless: the signer identity the certificate must name"},
		&cli.StringFlag{Name: "certificate-identity-regexp", Usage: "keyless: a regular expression the signer identity must match"},
		&cli.StringFlag{Name: "certificate-oidc-issuer", Usage: "keyless: the OIDC issuer the certificate must name"},
		&cli.StringFlag{Name: "trusted-root", Usage: "keyless: a Sigstore trusted root file, for offline verification"},
		&cli.BoolFlag{Name: "offline", Usage: "no transparency-log or certificate-transparency calls"},
		&cli.BoolFlag{Name: "insecure-allow-unsigned", Usage: "accept an unsigned manifest (said in every report)"},
	}
}

// verifierFromFlags builds the manifest verifier the trust flags ask for.
// insecure is true when --insecure-allow-unsigned was given and no key or
// identity: the caller then accepts unsigned manifests and says so.
func verifierFromFlags(c *cli.Context) (v manifest.Verifier, insecure bool, err error) {
	if c.Bool("insecure-allow-unsigned") && c.String("key") == "" && c.String("certificate-identity") == "" && c.String("certificate-identity-regexp") == "" {
		return nil, true, nil
	}
	return nil, false, usage(fmt.Errorf("manifest signature verification is not supported yet: pass --insecure-allow-unsigned"))
}
