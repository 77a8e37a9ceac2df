import { fixture } from '../fonts/font'

export const metadata = { title: 'lockstep fixture (app router)' }

export default function RootLayout({ children }) {
  return (
    <html lang="en" className={fixture.className}>
      <body>{children}</body>
    </html>
  )
}
