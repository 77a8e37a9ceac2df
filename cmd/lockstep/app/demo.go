package app

import (
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/demo"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "replay the main job end to end on this machine: an embedded registry and CDN, pin, record, a moved tag refused",
		Description: "Needs no network and nothing installed. Exits 0 when every step behaves as designed (the refusal\n" +
			"of the moved tag included), non-zero when one does not.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "keep the demo's files (asset tree, manifests) in `DIR` instead of a temporary directory"},
		},
		Action: func(c *cli.Context) error {
			return demo.Run(c.Context, c.App.Writer, demo.Options{Dir: c.String("dir"), ExitCode: ExitCode})
		},
	}
}
