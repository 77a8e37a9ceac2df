import styles from './Chart.module.css'

// Loaded by next/dynamic only: its own chunk and CSS.
export default function Chart() {
  return <div className={styles.chart}>chart</div>
}
