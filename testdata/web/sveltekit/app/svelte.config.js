import adapter from '@sveltejs/adapter-static'

// Every page prerendered by adapter-static into build/. paths.assets puts the
// build's own files (/_app/...) on the CDN; the pages and static/ files stay on
// the instance. version.name is fixed so that two builds give the same bytes
// (the default is the build's time).
export default {
  kit: {
    adapter: adapter({ pages: 'build', assets: 'build', fallback: undefined, precompress: false, strict: true }),
    paths: { assets: 'https://cdn.example.test/svelte' },
    version: { name: 'lockstep-fixture' },
    inlineStyleThreshold: 0,
  },
}
