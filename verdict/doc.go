// Package verdict is lockstep's vocabulary of outcomes, the ground floor
// every other package stands on (as containerd's errdefs is for
// containerd). A *MismatchError means "it does not match" (a refusal, exit
// 1); an *UnavailableError means "I could not check" (exit 3); an
// *OptionError means "the caller asked for something invalid" (exit 2).
// The first two are never confused: a timeout is not a mismatch, and a
// mismatch is never retried into a pass.
//
// It imports nothing of lockstep, so that manifest, admission and verify
// can all return its errors without importing each other.
package verdict
