// Package browsertest is a real browser for tests: headless Chromium
// (Debian's chromium package), driven through the DevTools protocol, that
// loads a page, waits until the network is idle, scrolls to the bottom so
// that what loads when visible loads, waits again, and returns every
// request the page made: the page's own, its frames', and its dedicated,
// shared and service workers' (each target is attached, paused, as it
// starts, and resumed once its network events are on), with the type,
// the initiator and the outcome of each.
//
// It is the oracle of the asset graph (admission's TestBrowserOracle):
// static reading will always be one framework behind, and a browser says
// what a page really loads.
//
// The driver is github.com/go-rod/rod, chosen for what it can see, not for
// speed: chromedp v0.23.1 starts faster (✱ a throwaway program, not kept,
// timed a cold start, one page load and a shutdown in 5 interleaved rounds
// on a loaded two-core machine: median 4.1 against 6.3 s; no script reruns
// it, and nothing here depends on it), but it drops the messages of
// sessions it did not attach itself, so it cannot see what a worker or a
// service worker fetches; rod hands over every session's events and calls
// on any session. The start is paid once per test binary.
//
// Start skips the test when Chromium is not installed, and fails it under
// LOCKSTEP_INTEGRATION=1 (scripts/install-deps.sh installs it). Chromium
// runs as root with --no-sandbox, with the flags that keep it off the
// network (no background networking, component updates or sync) and a
// fresh --user-data-dir.
//
// Each Load runs in a fresh browser context (no cache, no service worker,
// no storage from an earlier load) whose proxy is a loopback proxy of
// this package: a connection to a host that LoadOptions.Hosts maps goes
// to its loopback address, any other host but loopback is refused (the
// browser reports those requests as failed), and loopback addresses are
// reached directly. HTTPS to a mapped host is served with a certificate
// from ServerCert: the browser trusts the key of this package's test CA
// (--ignore-certificate-errors-spki-list) and nothing else, so a page
// that names https://cdn.example.test/ loads from a local server with the
// same origin, CORS and secure-context rules as in production.
package browsertest
