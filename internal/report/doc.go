// Package report holds the output helpers lockstep's reports share:
// SARIF 2.1.0 logs for code-scanning UIs, Markdown and plain-text tables
// for GitHub job summaries and terminals, and the indented JSON of every
// report's json format. It knows nothing of what
// a report says; verify/cdn and the fleet check build on it.
package report
