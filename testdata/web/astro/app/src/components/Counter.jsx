import { useState } from 'preact/hooks'

// A small preact island: the page hydrates it by the <astro-island> element's
// component-url and renderer-url.
export default function Counter({ label }) {
  const [n, setN] = useState(0)
  return <button onClick={() => setN(n + 1)}>{label} {n}</button>
}
