import { reactRouter } from '@react-router/dev/vite'
import { defineConfig } from 'vite'

// base puts the build's files (assets/...) on the CDN; index.html and public/
// files stay on the instance. No asset is inlined as a data: URI.
export default defineConfig({
  base: 'https://cdn.example.test/rr/',
  plugins: [reactRouter()],
  build: { assetsInlineLimit: 0, sourcemap: false },
})
