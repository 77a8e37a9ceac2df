import Link from 'next/link'
import dynamic from 'next/dynamic'
import styles from '../../components/Card.module.css'

const Chart = dynamic(() => import('../../components/Chart'), { ssr: false })

export default function Docs() {
  return (
    <main className={styles.card}>
      <h1>docs (pages router)</h1>
      <Chart />
      <Link href="/docs/setup">setup</Link> <Link href="/">home (app router)</Link>
    </main>
  )
}
