package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/manifest/signature"
	"github.com/lockstep-dev/lockstep/manifest/signature/keyless"
	"github.com/lockstep-dev/lockstep/verdict"
)

func signCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:      "sign",
		Usage:     "sign a release manifest (cosign's formats: MANIFEST.sig, and a Sigstore bundle)",
		ArgsUsage: "MANIFEST",
		Description: describe("Signs the manifest file's exact bytes with a key (cosign.key with COSIGN_PASSWORD, a PEM key or a\n"+
			"KMS URI), writing MANIFEST.sig (and, with --bundle, a Sigstore bundle), or keyless with the CI's OIDC\n"+
			"identity (Fulcio and Rekor), writing MANIFEST.sig and MANIFEST.sigstore.json.",
			[]string{
				"lockstep sign --key cosign.key release.json   # the password in COSIGN_PASSWORD",
				"lockstep sign --key cosign.key --bundle release.json.sigstore.json release.json",
				"lockstep sign --keyless release.json   # in CI with an OIDC token (GitHub Actions: id-token: write)",
			},
			exits{
				0: "signed: the signature files written",
				2: "a bad flag, a manifest file that does not exist, or a key that does not load (a wrong COSIGN_PASSWORD)",
				3: "the KMS, the OIDC provider, Fulcio or Rekor could not be reached",
			}),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "key", Usage: "the private key: a cosign key pair's cosign.key (password in COSIGN_PASSWORD), a PEM private key, or a KMS URI (awskms://...)", EnvVars: []string{"LOCKSTEP_SIGN_KEY"}},
			&cli.StringFlag{Name: "output-signature", Usage: "where to write the base64 signature (default MANIFEST.sig)"},
			&cli.StringFlag{Name: "bundle", Usage: "also write a Sigstore bundle here (keyless: default MANIFEST.sigstore.json)"},
			formatFlag("text", "json"),
		}, keylessFlags()...),
		Action: func(c *cli.Context) error {
			f, arg, err := formatAndOneArg(c, "sign takes one manifest file")
			if err != nil {
				return err
			}
			path := arg
			sign, bundle, err := signerFromFlags(c.Context, c, inv, "key", path)
			if err != nil {
				return err
			}
			res, err := signature.SignFile(c.Context, path, sign, signature.FileOutputs{Signature: c.String("output-signature"), Bundle: bundle})
			if errors.Is(err, fs.ErrNotExist) {
				return usage(err)
			}
			if err != nil {
				return err
			}
			if f == "json" {
				return json.NewEncoder(c.App.Writer).Encode(res)
			}
			fmt.Fprintln(c.App.Writer, res.Signature)
			if res.Bundle != "" {
				fmt.Fprintln(c.App.Writer, res.Bundle)
			}
			return nil
		},
	}
}

// signerFromFlags returns the sign function the key flag (keyFlag: "key"
// for sign, "sign-key" for rollback) or --keyless asks for, and the bundle
// path to write ("" for none).
func signerFromFlags(ctx context.Context, c flagValues, inv *invocation, keyFlag, path string) (signature.SignFunc, string, error) {
	key, kl, bundle := c.String(keyFlag), c.Bool("keyless"), c.String("bundle")
	switch {
	case key != "" && kl:
		return nil, "", usage(fmt.Errorf("--%s and --keyless are exclusive", keyFlag))
	case key != "":
		sv, err := signature.LoadSigner(ctx, key, inv.password())
		if err != nil {
			return nil, "", keyErr(err)
		}
		opt := signature.SignOptions{Bundle: bundle != ""}
		return func(ctx context.Context, raw []byte) (*signature.Signature, error) {
			return signature.Sign(ctx, sv, raw, opt)
		}, bundle, nil
	case kl:
		o := keyless.Options{IDToken: c.String("identity-token")}
		if p := c.String("signing-config"); p != "" {
			sc, err := root.NewSigningConfigFromPath(p)
			if err != nil {
				return nil, "", usage(fmt.Errorf("reading --signing-config: %w", err))
			}
			o.SigningConfig = sc
		}
		if p := c.String("trusted-root"); p != "" {
			tr, err := signature.LoadTrustedRoot(p)
			if err != nil {
				return nil, "", usage(err)
			}
			o.TrustedRoot = tr
		}
		if bundle == "" {
			bundle = path + signature.BundleSuffix
		}
		return func(ctx context.Context, raw []byte) (*signature.Signature, error) {
			sig, err := keyless.Sign(ctx, raw, o)
			if errors.Is(err, keyless.ErrNoIdentity) {
				return nil, usage(err)
			}
			return sig, err
		}, bundle, nil
	}
	return nil, "", usage(fmt.Errorf("signing needs --%s KEY or --keyless", keyFlag))
}

// manifestVerifyCommand is `lockstep manifest verify`.
func manifestVerifyCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "verify a manifest's signature (exit 0 verified, 1 not)",
		ArgsUsage: "MANIFEST",
		Description: describe("Verifies MANIFEST.sig (or --signature) or the Sigstore bundle MANIFEST.sigstore.json (or\n"+
			"--bundle) over the manifest file's exact bytes, against --key or the keyless identity flags.",
			[]string{
				"lockstep manifest verify --key cosign.pub release.json",
				"lockstep manifest verify --certificate-oidc-issuer https://token.actions.githubusercontent.com \\\n" +
					"  --certificate-identity https://github.com/ORG/REPO/.github/workflows/release.yml@refs/heads/main release.json",
				"lockstep manifest verify --key cosign.pub --signature release.sig --format json release.json",
			},
			exits{
				0: "verified",
				1: "not verified: unsigned, a signature or bundle that does not parse, other bytes (the manifest changed " +
					"since signing), another key, or a certificate naming another identity or issuer",
				2: "a usage error, or a manifest that cannot be read",
				3: "the trust material (Sigstore's TUF repository) or the KMS could not be reached",
			}),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "key", Usage: "the public key (PEM such as cosign.pub, or a KMS URI) that must have signed", EnvVars: []string{"LOCKSTEP_KEY"}},
			&cli.StringFlag{Name: "signature", Usage: "the base64 signature (default MANIFEST.sig, where it exists)"},
			&cli.StringFlag{Name: "bundle", Usage: "the Sigstore bundle (default MANIFEST.sigstore.json, where it exists)"},
			formatFlag("text", "json"),
		}, identityFlags()...),
		Action: func(c *cli.Context) error {
			f, arg, err := formatAndOneArg(c, "manifest verify takes one manifest file")
			if err != nil {
				return err
			}
			o, set, err := trustOptions(c.Context, c, "key")
			if err != nil {
				return err
			}
			if !set {
				return usage(errors.New("manifest verify needs --key PUB, or --certificate-identity and --certificate-oidc-issuer"))
			}
			v, err := signature.NewVerifier(o)
			if err != nil {
				return usage(err)
			}
			path := arg
			s, err := signature.VerifyFile(c.Context, v, path, c.String("signature"), c.String("bundle"))
			if errors.Is(err, fs.ErrNotExist) {
				return usage(err)
			}
			if s == nil || (err != nil && !verdict.IsMismatch(err)) {
				return err
			}
			res := signature.VerifyReport{Manifest: path, Release: s.Manifest.ID(), Digest: s.Digest.String(), Verified: err == nil, Signer: o.Want()}
			if err != nil {
				res.Error = err.Error()
			}
			if werr := res.Write(c.App.Writer, f); werr != nil {
				return werr
			}
			if err != nil {
				return refused(nil)
			}
			return nil
		},
	}
}
