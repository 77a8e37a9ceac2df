import { lazy, Suspense } from 'react'
import { Link } from 'react-router'

// A lazy component inside a route module: a chunk that only this route's
// module loads.
const Chart = lazy(() => import('../chart.jsx'))

export default function About() {
  return (
    <main>
      <h1>about</h1>
      <Suspense fallback={<p>loading</p>}>
        <Chart />
      </Suspense>
      <Link to="/">home</Link>
    </main>
  )
}
