import { defineConfig } from 'vite'
import react from '@vitejs/plugin-react'
import legacy from '@vitejs/plugin-legacy'

// A small React app that uses what a real build emits: a lazy chunk, CSS with a
// font and an image by url(), a module worker, public files, the manifest and
// the legacy entry (<script nomodule data-src>).
export default defineConfig({
  plugins: [react(), legacy({ targets: ['defaults'] })],
  build: {
    manifest: true,
    assetsInlineLimit: 0,
    sourcemap: false,
  },
})
