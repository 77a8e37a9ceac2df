import Link from 'next/link'

export default function Setup() {
  return (
    <main>
      <h1>setup (pages router)</h1>
      <img src="/tile.png" alt="tile" width="4" height="4" />
      <Link href="/docs">docs</Link>
    </main>
  )
}
