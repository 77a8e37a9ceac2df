// Package imagename is the one rule of what names the same image
// repository: every place that compares repositories (the webhook's
// governance, pin's moved-tag check) normalises through it, so that
// another spelling of a registry host cannot escape governance.
package imagename
