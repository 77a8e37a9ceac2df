package manifest

// CheckStored parses raw, read from a store at location, as the manifest
// named d of release, and returns it as a Signed. Bytes that are not a
// valid manifest, a manifest of another release, or a manifest whose
// digest is not d are a *CorruptError (the *ValidationError's text in its
// Reason: damaged store content is "could not verify", exit 3, not invalid
// input): every Store backend's Get calls it.
func CheckStored(raw []byte, location, release string, d Digest) (*Signed, error) {
	s, err := NewSigned(raw, location)
	if err != nil {
		return nil, &CorruptError{Location: location, Reason: "not a valid manifest: " + err.Error()}
	}
	if s.Manifest.Release.Name != release {
		return nil, &CorruptError{Location: location, Reason: "the manifest is of release " + s.Manifest.Release.Name + ", not " + release}
	}
	if s.Digest != d {
		return nil, &CorruptError{Location: location, Reason: "its manifest digest is " + s.Digest.String() + ", not the " + d.String() + " it is stored under"}
	}
	return s, nil
}
