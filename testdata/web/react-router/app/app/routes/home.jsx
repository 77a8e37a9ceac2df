import { Link } from 'react-router'
import tile from '../assets/tile.png'

export default function Home() {
  return (
    <main>
      <h1>home</h1>
      <img src={tile} width="4" height="4" alt="tile" />
      <Link to="/about">about</Link>
    </main>
  )
}
