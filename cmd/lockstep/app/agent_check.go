package app

import (
	"context"

	"github.com/lockstep-dev/lockstep/admission/agent"
	"github.com/lockstep-dev/lockstep/internal/transport"
	"github.com/lockstep-dev/lockstep/manifest"
	"github.com/lockstep-dev/lockstep/manifest/store"
	"github.com/lockstep-dev/lockstep/manifest/trusted"
)

// agentChecker builds the check the agent re-runs from the same flags as
// admit (checkFromFlags), and, when the manifest comes from a store
// channel, the watch that re-checks as soon as the channel moves: on the
// store the check reads, opened once, on the check's transport.
func agentChecker(ctx context.Context, c flagValues, inv *invocation) (agent.Checker, agent.WatchFunc, error) {
	bundle, err := awsCABundle()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := checkFromFlags(ctx, c, inv, inv.client(transport.DefaultPolicy(), clientOptions{Gate: true, AllowLinkLocal: c.Bool("allow-link-local"), Bundle: bundle}))
	if err != nil {
		return nil, nil, err
	}
	var watch agent.WatchFunc
	if ch, ok := storeChannel(cfg.Source); ok {
		watch = agent.WatchChannel(ch.Store, ch.Release, ch.Channel)
	}
	return agent.Admission(cfg), watch, nil
}

// storeChannel returns the store channel a source built by
// trustedSourceFromFlags reads, if it reads one (--store).
func storeChannel(src manifest.Source) (store.ChannelSource, bool) {
	if ts, ok := src.(*trusted.Source); ok {
		src = ts.Upstream
	}
	ch, ok := src.(store.ChannelSource)
	return ch, ok
}

// Every store can be watched.
var _ agent.ChannelReader = manifest.Store(nil)
