// SPA mode: no server rendering at run time; the build prerenders the root
// route into build/client/index.html, and the router loads each route's
// module from the manifest (manifest-….js) it writes.
export default {
  ssr: false,
  buildDirectory: 'build',
}
