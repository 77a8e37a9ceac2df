import { defineConfig } from 'astro/config'
import preact from '@astrojs/preact'

// A static Astro site with preact islands (client:load, client:idle,
// client:visible), two pages, a CSS import with a font and an image by
// url(), and an imported image. build.assetsPrefix puts the build's own
// files (/_astro/...) on the CDN; the pages and public/ files stay on the
// instance. Nothing is inlined: no stylesheet into the HTML, no asset into
// a data: URI.
export default defineConfig({
  output: 'static',
  integrations: [preact()],
  build: {
    assetsPrefix: 'https://cdn.example.test/astro',
    inlineStylesheets: 'never',
  },
  vite: {
    build: { assetsInlineLimit: 0, sourcemap: false },
  },
  devToolbar: { enabled: false },
})
