// Package systemdtest judges systemd units the way systemd reads them, for
// tests: it lays out a scratch system root, loads units in it with
// systemd's own loader (systemd-analyze verify --root, which needs no
// running systemd) and reads back what systemd made of them (its unit
// dump: the fragment and drop-ins it applied, every dependency, the start
// transaction). Gated says whether one unit can start only after another
// ran to success: the boot gate's promise that the unit taking traffic
// never starts on a refused instance.
//
// It is test support: nothing in the lockstep binary imports it
// (cmd/lockstep/depcheck_test.go).
package systemdtest
