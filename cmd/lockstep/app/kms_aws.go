//go:build awskms

package app

// The AWS KMS provider for --key awskms://..., compiled in with
// `go build -tags awskms ./cmd/lockstep`. It is left out of the default
// binary, which every booting instance downloads: it adds about 6.5 MB
// (20%) for a signing-side feature. The library packages the boot gate
// imports never link it (see verify/imagesig's depcheck test).
import _ "github.com/sigstore/sigstore/pkg/signature/kms/aws"
