package manifest

import "context"

// FetchAssetList returns the manifest src names, for a reader of its
// asset list (cdn check), and where it came from. A local file (bound to a
// release or not) is parsed and validated alone, strictly as ever
// (ReadFile): its asset list is read, never its digest (a second,
// canonical encoding of the whole document, about 5% of the CPU of a check
// of 10,000 assets) nor the signature files beside it; bound, its release
// is checked (CheckRelease). Any other source is fetched whole.
func FetchAssetList(ctx context.Context, src Source) (*Manifest, string, error) {
	inner, release := src, ""
	if b, ok := src.(Bound); ok {
		inner, release = b.Source, b.Release
	}
	file, ok := inner.(FileSource)
	if !ok {
		s, err := src.Fetch(ctx)
		if err != nil {
			return nil, "", err
		}
		return s.Manifest, s.Location, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	m, _, err := ReadFile(file.Path)
	if err != nil {
		return nil, "", err
	}
	if release != "" {
		if err := CheckRelease(&Signed{Manifest: m, Location: file.Path}, release); err != nil {
			return nil, "", err
		}
	}
	return m, file.Path, nil
}
