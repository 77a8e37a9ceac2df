package app

import (
	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/internal/imagename"
)

// registryAliasFlag declares the registry hosts that DNS makes one:
// images on ALIAS are governed as images on CANONICAL.
func registryAliasFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "registry-alias", Usage: "`ALIAS=CANONICAL`: another name of a registry host (a CNAME, an IP address), governed as CANONICAL (repeatable); case, a trailing dot, the default port, IPv4-mapped, numeric (127.1, 0x7f000001, 2130706433) and loopback spellings are folded without it", EnvVars: []string{"LOCKSTEP_REGISTRY_ALIAS"}}
}

// namesFromFlags is the one name-normalisation rule, with --registry-alias.
func namesFromFlags(c flagValues) (imagename.Names, error) {
	n, err := imagename.New(c.StringSlice("registry-alias"))
	if err != nil {
		return imagename.Names{}, usage(err)
	}
	return n, nil
}
