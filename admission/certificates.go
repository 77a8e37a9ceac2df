package admission

import (
	"fmt"
	"sort"
	"time"
)

// certificates reports the certificate of every TLS endpoint the
// client touched: one expired (tls-expiring) or that did not verify
// (tls-invalid) refuses; one valid for at most TLSWarning more is a
// tls-expiring warning. tlsFailed are hosts whose TLS failed without a
// certificate to show (a handshake that failed before one was sent), with
// why: each refuses as tls-invalid.
func (c *checker) certificates(tlsFailed map[string]string) {
	now := c.cfg.Now()
	certs := c.cfg.Client.Certificates()
	sort.Slice(certs, func(i, j int) bool { return certs[i].Host < certs[j].Host })
	for _, cert := range certs {
		delete(tlsFailed, cert.Host)
		left := cert.NotAfter.Sub(now)
		notAfter := cert.NotAfter.UTC().Format(time.RFC3339)
		f := Finding{Kind: KindTLSExpiring, Subject: cert.Host, Got: notAfter}
		switch {
		case left <= 0:
			f.Want = "a certificate valid at " + now.UTC().Format(time.RFC3339)
			f.Message = fmt.Sprintf("the certificate of %s (%s) expired at %s", cert.Host, cert.Subject, notAfter)
		case cert.Error != "":
			f.Kind, f.Got = KindTLSInvalid, cert.Error
			f.Message = fmt.Sprintf("the certificate of %s (%s) does not verify: %s", cert.Host, cert.Subject, cert.Error)
		case left <= c.cfg.TLSWarning:
			f.Severity = Warn
			f.Want = "valid for more than " + c.cfg.TLSWarning.String()
			f.Message = fmt.Sprintf("the certificate of %s (%s) expires in %s, at %s", cert.Host, cert.Subject, left.Round(time.Hour), notAfter)
		default:
			continue
		}
		c.add(f)
	}
	hosts := make([]string, 0, len(tlsFailed))
	for h := range tlsFailed {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		c.add(Finding{Kind: KindTLSInvalid, Subject: h, Got: tlsFailed[h], Message: fmt.Sprintf("TLS with %s failed: %s", h, tlsFailed[h])})
	}
}
