// Package startfloor holds programs that link a part of lockstep and exit
// at once, for bench/start.sh FLOORS=1: how fast a build of only that
// part could start (the package initialisation of what it links), the
// figure that decides whether a gate-only build is worth shipping.
//
//	gate        what `lockstep admit` links, with no other command
//	gatenosig   the same without manifest/signature and verify/imagesig,
//	            that is without cosign/v2/pkg/cosign (the list they share
//	            is the package admitnosig)
//	gatecore    what a gate cannot do without: the check, the runtimes,
//	            the trusted state, the CDN check, keyed verification by
//	            sigstore/sigstore, the CLI; no AWS, registry or cosign
//	containerd  containerd's Go client alone (admission/running used it
//	            until it called containerd's gRPC API directly)
//	containerdapi  the gRPC API stubs admission/running calls instead
//	awsclients  the Auto Scaling, ECS and ELBv2 clients alone, whose
//	            schemas the AWS SDK builds at init
//	empty       nothing: any Go program's start
package startfloor
