// Package startfloor holds programs that link a part of lockstep and exit
// at once, for bench/start.sh FLOORS=1: how fast a build of only that
// part could start (the package initialisation of what it links), the
// figure that decides whether a gate-only build is worth shipping.
//
//	gate       what `lockstep admit` links, with no other command
//	gatenosig  the same without manifest/signature and verify/imagesig,
//	           that is without cosign/v2/pkg/cosign
package startfloor
