package app

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/manifest/signature"
)

// keygenCommand is `lockstep keygen`, cosign generate-key-pair's twin.
func keygenCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "keygen",
		Usage: "make a signing key pair in cosign's format (PREFIX.key encrypted with COSIGN_PASSWORD, PREFIX.pub)",
		Description: describe("The pair is the one `cosign generate-key-pair` makes: an ECDSA P-256 private key encrypted with the\n"+
			"password in COSIGN_PASSWORD (which must be set; COSIGN_PASSWORD= for the empty password), mode 0600, and\n"+
			"its PEM public key. cosign signs and verifies with it, and lockstep with cosign's. An existing file is\n"+
			"never overwritten (exit 2).",
			[]string{
				"lockstep keygen   # cosign.key and cosign.pub, the key encrypted with $COSIGN_PASSWORD",
				"COSIGN_PASSWORD= lockstep keygen --output-key-prefix ci   # ci.key (empty password) and ci.pub",
				"lockstep keygen --output-key-prefix release --format json",
			},
			exits{
				0: "the pair written",
				2: "COSIGN_PASSWORD not set, PREFIX.key or PREFIX.pub already there, or a bad flag",
				3: "the files could not be written",
			}),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output-key-prefix", Value: "cosign", Usage: "write `PREFIX`.key and PREFIX.pub"},
			formatFlag("text", "json"),
		},
		Action: func(c *cli.Context) error {
			f, err := format(c, "text", "json")
			if err != nil {
				return err
			}
			if c.NArg() != 0 {
				return usage(fmt.Errorf("keygen takes no arguments, got %q", c.Args().First()))
			}
			kp, err := signature.GenerateKeyPair(c.String("output-key-prefix"), inv.password())
			if errors.Is(err, signature.ErrNoPassword) || errors.Is(err, fs.ErrExist) {
				return usage(err)
			}
			if err != nil {
				return err
			}
			if f == "json" {
				return storeJSON(c.App.Writer, kp)
			}
			_, err = fmt.Fprintf(c.App.Writer, "%s\n%s\n", kp.PrivateKey, kp.PublicKey)
			inv.log.Info("wrote a key pair: keep the private key and its password secret; consumers need the public key", "fingerprint", kp.Fingerprint)
			return err
		},
	}
}
