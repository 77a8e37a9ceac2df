// Package remote reads a release manifest from an https URL, and its
// signature from the same URL with ".sig" appended, through the shared
// transport. Plain http is accepted only for a loopback host.
package remote
