// Package cssurl reads the URLs a piece of CSS loads, with a CSS Syntax
// tokenizer (github.com/tdewolff/parse/v2/css): what the boot gate's probe
// follows in a page's stylesheets and what record's asset graph draws from
// a stylesheet to its fonts, images and imports.
package cssurl
