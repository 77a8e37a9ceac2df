import Link from 'next/link'
import styles from '../components/Card.module.css'
import Lazy from '../components/Lazy'

export default function Home() {
  return (
    <main className={styles.card}>
      <h1>app router</h1>
      <img src="/tile.png" alt="tile" width="4" height="4" />
      <Lazy />
      <Link href="/about">about</Link> <Link href="/docs">docs (pages router)</Link>
    </main>
  )
}
