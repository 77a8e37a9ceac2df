package app

import (
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/admission/agent"
	"github.com/lockstep-dev/lockstep/manifest"
)

// agentCheckFlags are the admission check's flags, the same as admit's.
func agentCheckFlags() []cli.Flag { return slices.Concat(sourceFlags(), trustFlags(), checkFlags()) }

// agentChecker builds the check the agent re-runs from the same flags as
// admit (checkFromFlags), and, when the manifest comes from a store
// channel, the watch that re-checks as soon as the channel moves.
func agentChecker(c *cli.Context) (agent.Checker, agent.WatchFunc, error) {
	client, err := admitClient(gateOptions(c)...)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := checkFromFlags(c, client)
	if err != nil {
		return nil, nil, err
	}
	var watch agent.WatchFunc
	if url := c.String("store"); url != "" {
		st, err := openStore(c.Context, url, logger(c))
		if err != nil {
			return nil, nil, err
		}
		watch = agent.WatchChannel(st, c.String("release"), c.String("channel"))
	}
	return agent.Admission(cfg), watch, nil
}

// Every store can be watched.
var _ agent.ChannelReader = manifest.Store(nil)
