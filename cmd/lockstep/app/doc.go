// Package app is lockstep's command-line interface, on urfave/cli/v2. It is
// thin: each command parses its flags, calls one library function and
// renders the result. Results go to the app's Writer (stdout), talk and
// logs to its ErrWriter (stderr). Exit codes are chosen in one place, Exit.
package app
