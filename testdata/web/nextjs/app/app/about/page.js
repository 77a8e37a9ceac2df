import Link from 'next/link'

export default function About() {
  return (
    <main>
      <h1>about (app router)</h1>
      <Link href="/">home</Link>
    </main>
  )
}
