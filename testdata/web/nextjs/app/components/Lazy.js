'use client'
import dynamic from 'next/dynamic'

// next/dynamic: the Chart component is a chunk of its own, loaded in the
// browser only (ssr: false), so no page's HTML names it.
const Chart = dynamic(() => import('./Chart'), { ssr: false, loading: () => <p>loading</p> })

export default function Lazy() {
  return <Chart />
}
