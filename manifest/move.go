package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// MaxHistory bounds Pointer.History: the positions a pointer document
// remembers, newest first.
const MaxHistory = 32

// MaxPointerSize bounds a pointer document, in bytes.
const MaxPointerSize = 1 << 20

// NextPointer decides a channel move: it is the one place where the store
// rule lives, and every Store backend calls it, under its own
// compare-and-swap, each time it has (re-)read the channel. cur is the
// pointer the channel holds (nil: the channel does not exist yet). It
// returns the pointer document that moving the channel to s makes, or a
// *GenerationError naming both generations when s's generation is not
// strictly higher than cur's.
func NextPointer(cur *Pointer, channel string, s *Signed, by string, now time.Time) (*Pointer, error) {
	if s == nil || s.Manifest == nil {
		return nil, errors.New("moving a channel: no manifest")
	}
	if err := ValidateName(channel); err != nil {
		return nil, fmt.Errorf("channel name: %w", err)
	}
	r := s.Manifest.Release
	next := &Pointer{
		Release:    r.Name,
		Channel:    channel,
		Digest:     s.Digest,
		Generation: r.Generation,
		MovedAt:    now.UTC(),
		MovedBy:    by,
	}
	if cur == nil {
		return next, nil
	}
	if cur.Release != r.Name || cur.Channel != channel {
		return nil, &CorruptError{Location: r.Name + "/channels/" + channel, Reason: fmt.Sprintf("pointer names release %q channel %q", cur.Release, cur.Channel)}
	}
	if r.Generation <= cur.Generation {
		return nil, &GenerationError{Release: r.Name, Channel: channel, Have: cur.Generation, Offered: r.Generation, HaveDigest: cur.Digest, OfferedDigest: s.Digest}
	}
	next.History = append([]PointerEntry{{Digest: cur.Digest, Generation: cur.Generation, MovedAt: cur.MovedAt, MovedBy: cur.MovedBy}}, cur.History...)
	if len(next.History) > MaxHistory {
		next.History = next.History[:MaxHistory]
	}
	return next, nil
}

// Encode returns the pointer document as stored: indented JSON with a
// trailing newline.
func (p *Pointer) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParsePointer decodes a pointer document strictly, as read from location
// (for messages), and checks that it names release and channel. A
// truncated or malformed document, an unknown field or a missing or
// invalid field is a *CorruptError.
func ParsePointer(data []byte, location, release, channel string) (*Pointer, error) {
	corrupt := func(reason string, err error) error {
		return &CorruptError{Location: location, Reason: reason, Err: err}
	}
	if len(data) > MaxPointerSize {
		return nil, corrupt("pointer document over "+strconv.Itoa(MaxPointerSize)+" bytes", nil)
	}
	if err := checkText(data); err != nil {
		return nil, corrupt(err.Error(), nil)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Pointer
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, corrupt("pointer document is truncated", err)
		}
		return nil, corrupt("pointer document is not valid: "+err.Error(), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, corrupt("trailing data after the pointer document", nil)
	}
	switch {
	case p.Release != release:
		return nil, corrupt(fmt.Sprintf("pointer names release %q, want %q", p.Release, release), nil)
	case p.Channel != channel:
		return nil, corrupt(fmt.Sprintf("pointer names channel %q, want %q", p.Channel, channel), nil)
	case p.Digest.IsZero():
		return nil, corrupt("pointer has no digest", nil)
	case p.Generation < 1:
		return nil, corrupt("pointer generation "+itoa(p.Generation)+" is below 1", nil)
	case p.Generation > MaxGeneration:
		return nil, corrupt("pointer generation "+itoa(p.Generation)+" is over the maximum "+itoa(MaxGeneration), nil)
	case p.MovedAt.IsZero():
		return nil, corrupt("pointer has no movedAt", nil)
	}
	return &p, nil
}

// CorruptError says that a document in a store is damaged: a truncated or
// malformed pointer, a pointer naming a manifest that is not there, a
// manifest whose bytes do not hash to its name. Stores return it and never
// overwrite what they found.
type CorruptError struct {
	// Location names the object, e.g. "web/channels/production.json".
	Location string
	Reason   string
	Err      error
}

func (e *CorruptError) Error() string {
	return "store object " + e.Location + " is corrupt: " + e.Reason
}

func (e *CorruptError) Unwrap() error { return e.Err }

// ConflictError says that a channel kept moving under a compare-and-swap
// until the store gave up. Nothing was written; the caller may try again.
type ConflictError struct {
	Release, Channel string
	Attempts         int
}

func (e *ConflictError) Error() string {
	return "release " + e.Release + " channel " + e.Channel + ": the channel moved concurrently " +
		strconv.Itoa(e.Attempts) + " times; gave up"
}
