// Package storetest is the contract every manifest.Store backend passes:
// Run for the behaviour (storing, the generation rule, the stale-publisher
// race, 50 concurrent publishers against a gc loop), RunCorrupt for damaged
// store content. Backends call them from their tests:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) manifest.Store { return newStore(t) })
//	}
package storetest
