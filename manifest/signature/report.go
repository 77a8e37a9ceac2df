package signature

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/lockstep-dev/lockstep/internal/report"
)

// VerifyReport is what `lockstep manifest verify` says of a manifest file
// and its signature.
type VerifyReport struct {
	Manifest string `json:"manifest"`
	Release  string `json:"release"`
	Digest   string `json:"digest"`
	Verified bool   `json:"verified"`
	// Signer is who had to sign: "key SHA256:<hex>" or "identity … from
	// issuer …".
	Signer string `json:"signer"`
	// Error is why it did not verify.
	Error string `json:"error,omitempty"`
}

// ReportFormats are the formats VerifyReport.Write takes.
var ReportFormats = []string{"text", "json"}

// Write renders the report in format: "text" (one line: verified, and by
// whom, or NOT verified, and why) or "json" (one line).
func (r VerifyReport) Write(w io.Writer, format string) error {
	switch format {
	case "json":
		return json.NewEncoder(w).Encode(r)
	case "text":
	default:
		return report.UnknownFormat(format, ReportFormats)
	}
	var err error
	if r.Verified {
		_, err = fmt.Fprintf(w, "verified %s (%s %s), signed by %s\n", r.Manifest, r.Release, r.Digest, r.Signer)
	} else {
		_, err = fmt.Fprintf(w, "NOT verified %s (%s %s): %s\n", r.Manifest, r.Release, r.Digest, r.Error)
	}
	return err
}
