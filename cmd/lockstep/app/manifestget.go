package app

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
)

// manifestGetCommand is `lockstep manifest get`: the manifest a store's
// channel names, verified, written with its signature files.
func manifestGetCommand(inv *invocation) *cli.Command {
	return &cli.Command{
		Name:  "get",
		Usage: "write the manifest a store's channel names, with its signature files, once verified",
		Description: describe("Reads the channel's pointer and the manifest it names, verifies its signature (--key, the keyless\n"+
			"flags, or --insecure-allow-unsigned) and writes it to --output with OUTPUT.sig and OUTPUT.sigstore.json\n"+
			"beside it (atomically; its digest then goes to stdout), or the manifest alone to stdout. Nothing is\n"+
			"written for a manifest that does not verify.",
			[]string{
				"lockstep manifest get --store s3://releases/lockstep --release store-web --key cosign.pub -o release.json",
				"lockstep manifest get --store file:///srv/lockstep --release store-web --channel staging --key cosign.pub",
			},
			exits{
				0: "written",
				1: "the signature does not verify",
				2: "bad input",
				3: "no such release or channel (the message lists what the store holds), or the store could not be read",
			}),
		Flags: append([]cli.Flag{
			storeURLFlag(), storeReleaseFlag(), storeChannelFlag(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the manifest to `FILE` (with FILE.sig and FILE.sigstore.json) instead of stdout"},
			formatFlag("text", "json"),
		}, trustFlags()...),
		Action: func(c *cli.Context) error {
			f, err := format(c, "text", "json")
			if err != nil {
				return err
			}
			if c.NArg() != 0 {
				return usage(fmt.Errorf("manifest get takes no arguments, got %q", c.Args().First()))
			}
			v, insecure, err := verifierFromFlags(c.Context, c)
			if err != nil {
				return err
			}
			st, err := inv.openStore(c.Context, c.String("store"), nil)
			if err != nil {
				return err
			}
			s, err := store.Current(c.Context, st, c.String("release"), c.String("channel"), v)
			if err != nil {
				return err
			}
			if insecure {
				inv.log.Warn("the manifest's signature was not required (--insecure-allow-unsigned)", "release", s.Manifest.ID())
			}
			out := c.String("output")
			var side manifest.SidecarPaths
			if out != "" {
				if side, err = manifest.WriteFile(out, s, manifest.SidecarPaths{}); err != nil {
					return err
				}
			}
			return store.NewGot(s, c.String("channel"), out, side).Write(c.App.Writer, f)
		},
	}
}
