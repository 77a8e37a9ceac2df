package probe

import "fmt"

// StatusError is a page that answered with a status other than 200. Fetch
// returns it wrapped in a *verdict.UnavailableError; a gate waiting for an
// app that is still starting tells a 502/503 (a proxy in front of an app
// not up yet) from a 404 by it.
type StatusError struct {
	URL    string
	Code   int
	Status string
}

func (e *StatusError) Error() string { return fmt.Sprintf("GET %s: %s", e.URL, e.Status) }
