// Package trusted is a consumer's trusted state: per release, the highest
// generation it has accepted, and a copy of the manifest it accepted. It
// is what makes rollback protection hold across restarts: a manifest whose
// generation is lower than one accepted before is refused
// (manifest-rollback), and so is one that has expired (manifest-expired).
//
// The state lives in a directory (DefaultDir, /var/lib/lockstep, unless
// told), one record per release:
//
//	DIR/RELEASE.state.json      {"release","generation","digest","acceptedAt"}
//	DIR/RELEASE.manifest.json   the accepted manifest's bytes (+ .sig, .bundle)
//
// written atomically, under an flock on DIR/.lock, and only by Accept,
// which a consumer calls after every check has passed.
//
// *State is an admission.GenerationGuard: admission.Check calls its Check
// once the manifest's signature verifies (a *RefusalError becomes the
// finding of its Kind) and its Accept once every check has passed, never
// in a dry run. A *Source is one too, by its State: admission.Check guards
// with a Source it is given unless told otherwise. That is the one place
// rollback protection is enforced; a consumer that does not use admission
// follows the same flow:
//
//	st, _ := trusted.Open(dir)
//	src := &trusted.Source{Upstream: channelSource, State: st, Release: name, MaxAge: maxAge}
//	m, err := src.Fetch(ctx)        // the store's manifest, or the cache (see below)
//	err = st.Check(ctx, m)          // refuses rollback and expiry (*RefusalError)
//	... every other check ...
//	err = st.Accept(ctx, m)         // only when admitted
//
// With MaxAge > 0, a store that cannot be reached (a *verdict.UnavailableError
// from Upstream) makes Source fall back to the cached copy, if Accept
// stored it (or confirmed it, accepting the same manifest from the store)
// at most MaxAge ago; accepting the cached copy itself confirms nothing.
// By default (MaxAge 0) an unreachable store is a refusal: the
// UnavailableError is returned.
package trusted
