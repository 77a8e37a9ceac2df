package app

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/lockstep-dev/lockstep/admission/agent"
)

// agentCheckFlags are the admission check's flags, the same as admit's.
func agentCheckFlags() []cli.Flag { return append(sourceFlags(), trustFlags()...) }

// agentChecker builds the check the agent re-runs from the same flags as
// admit, and the channel watch when the manifest comes from a store.
func agentChecker(*cli.Context) (agent.Checker, agent.WatchFunc, error) {
	return nil, nil, unverified(errors.New("the agent's check is admission.Check, which this build does not have yet"))
}
