import { fixture } from '../fonts/font'

export default function App({ Component, pageProps }) {
  return (
    <div className={fixture.className}>
      <Component {...pageProps} />
    </div>
  )
}
