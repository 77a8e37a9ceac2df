package webhook

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	admissionv1 "k8s.io/api/admission/v1"
)

// The webhook decodes JSON with encoding/json/v2's semantics
// (github.com/go-json-experiment/json, the standard library's from Go
// 1.27), which are the strict ones a gate wants by default, in one pass:
// names match case-sensitively (as the API server matches them), a
// duplicate name anywhere in the document is an error (two "image" keys
// are a classic bypass: one parser takes the first, another the last),
// and so are invalid UTF-8 and data after the value. Unknown names are
// ignored: a newer API server adds some.

// strictUnmarshal decodes raw into v with those rules.
func strictUnmarshal(raw []byte, v any) error {
	return jsonv2.Unmarshal(raw, v)
}

// objectValues are the members of an AdmissionReview's request that hold
// the object under review rather than the review itself.
var objectValues = map[string]bool{
	"/request/object":    true,
	"/request/oldObject": true,
	"/request/options":   true,
}

// decodeReview decodes an AdmissionReview v1 strictly enough: one JSON
// object, case-sensitive, no duplicate names, the right apiVersion and
// kind, a request with a uid.
//
// A duplicate name inside the object (or the old object, or the options)
// is not the review's fault but the object's: the review is decoded
// without that check, so that the handler answers it with a denial that
// says why ("decoding the object: …", from decodePodObject, which refuses
// it again) rather than with an HTTP error whose effect is the
// failurePolicy's. Every other member of the review is still held to no
// duplicates (reviewDuplicate), so a repeated uid or operation cannot
// ride along.
func decodeReview(body []byte) (*admissionv1.AdmissionReview, error) {
	var review admissionv1.AdmissionReview
	if err := strictUnmarshal(body, &review); err != nil {
		if !duplicateInObject(err) {
			return nil, fmt.Errorf("decoding the AdmissionReview: %w", err)
		}
		review = admissionv1.AdmissionReview{}
		if err := jsonv2.Unmarshal(body, &review, jsontext.AllowDuplicateNames(true)); err != nil {
			return nil, fmt.Errorf("decoding the AdmissionReview: %w", err)
		}
		if err := reviewDuplicate(body); err != nil {
			return nil, fmt.Errorf("decoding the AdmissionReview: %w", err)
		}
	}
	if review.APIVersion != admissionv1.SchemeGroupVersion.String() || review.Kind != "AdmissionReview" {
		return nil, fmt.Errorf("apiVersion %q kind %q: want %s AdmissionReview", review.APIVersion, review.Kind, admissionv1.SchemeGroupVersion)
	}
	if review.Request == nil {
		return nil, errors.New("the AdmissionReview has no request")
	}
	if review.Request.UID == "" {
		return nil, errors.New("the AdmissionReview request has no uid")
	}
	return &review, nil
}

// duplicateInObject reports whether err is a duplicate name inside one of
// the objectValues.
func duplicateInObject(err error) bool {
	var serr *jsontext.SyntacticError
	if !errors.As(err, &serr) || !errors.Is(serr.Err, jsontext.ErrDuplicateName) {
		return false
	}
	p := string(serr.JSONPointer)
	for v := range objectValues {
		if p == v || strings.HasPrefix(p, v+"/") {
			return true
		}
	}
	return false
}

// reviewDuplicate walks body and returns an error for a duplicate name in
// any object outside the objectValues (which it skips). It runs only when
// the one-pass decode found a duplicate inside them.
func reviewDuplicate(body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true))
	var seen []map[string]bool
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch tok.Kind() {
		case '{':
			seen = append(seen, map[string]bool{})
			continue
		case '}':
			seen = seen[:len(seen)-1]
			continue
		}
		kind, n := dec.StackIndex(dec.StackDepth())
		if kind != '{' || n%2 != 1 {
			continue // a value, not a name
		}
		name, top := tok.String(), seen[len(seen)-1]
		if top[name] {
			return fmt.Errorf("duplicate object member name %q within %q", name, dec.StackPointer().Parent())
		}
		top[name] = true
		if objectValues[string(dec.StackPointer())] {
			if err := dec.SkipValue(); err != nil {
				return err
			}
		}
	}
}
