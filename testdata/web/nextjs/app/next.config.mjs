// A static export that uses what a real Next.js site ships: the app router and
// the pages router, next/dynamic, CSS modules, next/font/local, an image from
// public/, and assetPrefix: the build's own files (/_next/...) are loaded from
// the CDN base below, while public/ files, the HTML and the app router's RSC
// .txt payloads stay on the instance.
export default {
  output: 'export',
  assetPrefix: 'https://cdn.example.test/next',
  generateBuildId: () => 'lockstep-fixture',
  images: { unoptimized: true },
  productionBrowserSourceMaps: false,
  poweredByHeader: false,
}
