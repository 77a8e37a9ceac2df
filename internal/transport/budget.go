package transport

// SpendRetry is the client's retry budget for a library that retries on
// its own over Transport (go-containerregistry, through ggcrretry): it
// charges one retryable failure to the budget the client's own requests
// share and reports whether a retry is allowed. Call it once for each
// retryable failure. The library's retries are not counted in Stats.
func (c *Client) SpendRetry() bool {
	c.budget.fail()
	return c.budget.allow()
}

// EarnRetry credits the budget with an answer that needed no retry, as
// the client's own retry loop does for each one.
func (c *Client) EarnRetry() { c.budget.earn() }
