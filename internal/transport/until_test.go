package transport

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	errNotYet, errFinal := errors.New("not yet"), errors.New("final")
	notYet := func(err error) bool { return errors.Is(err, errNotYet) }
	for _, tc := range []struct {
		name      string
		results   []error // fn's answers in turn; the last repeats
		deadline  time.Duration
		wantCalls int
		wantErr   error
	}{
		{name: "at once", results: []error{nil}, deadline: time.Minute, wantCalls: 1},
		{name: "after three not-yets", results: []error{errNotYet, errNotYet, errNotYet, nil}, deadline: time.Minute, wantCalls: 4},
		{name: "final ends the wait", results: []error{errNotYet, errFinal, nil}, deadline: time.Minute, wantCalls: 2, wantErr: errFinal},
		{name: "deadline keeps the last not-yet", results: []error{errNotYet}, deadline: 200 * time.Millisecond, wantErr: errNotYet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.deadline)
			defer cancel()
			calls := 0
			n, err := Until(ctx, fast(), notYet, func(context.Context) error {
				err := tc.results[min(calls, len(tc.results)-1)]
				calls++
				return err
			})
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("Until = %v, want %v", err, tc.wantErr)
			}
			if n != calls || (tc.wantCalls > 0 && n != tc.wantCalls) {
				t.Errorf("Until made %d calls (counted %d), want %d", n, calls, tc.wantCalls)
			}
			if tc.wantCalls == 0 && n < 2 {
				t.Errorf("Until gave up after %d calls before its deadline", n)
			}
		})
	}
}
