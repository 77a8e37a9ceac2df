package probe_test

import (
	"fmt"
	"net/url"

	"github.com/lockstep-dev/lockstep/admission/probe"
)

func ExampleMap() {
	page, _ := url.Parse("http://127.0.0.1:8080/")
	p, _ := probe.Parse(page, "text/html", []byte(`<!doctype html>
<link rel="stylesheet" href="https://cdn.example.com/static/css/site.2b.css">
<script type="module" src="https://cdn.example.com/static/js/app.1a.js"></script>
<link rel="icon" href="/static/favicon.3c.ico">
<img srcset="https://cdn.example.com/static/img/hero.4d.png 1x, https://cdn.example.com/static/img/hero@2x.5e.png 2x">
<script src="https://tracker.example.net/t.js"></script>`))
	m := probe.Map([]*probe.Page{p}, []string{"https://cdn.example.com/static/"})
	fmt.Println(m.IDs)
	fmt.Println(m.Foreign)
	// Output:
	// [css/site.2b.css favicon.3c.ico img/hero.4d.png img/hero@2x.5e.png js/app.1a.js]
	// [https://tracker.example.net/t.js]
}
