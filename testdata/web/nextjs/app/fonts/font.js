import localFont from 'next/font/local'

// next/font/local: the font file is copied to /_next/static/media and named
// by a @font-face in the CSS; the layouts use its class name.
export const fixture = localFont({ src: './fixture.woff2', display: 'swap', preload: true })
