// Package registry pins image references by digest: it resolves each tag
// with go-containerregistry and records the index digest, every platform's
// manifest digest and every platform's config digest (the image ID), the
// three values a runtime may report.
package registry
