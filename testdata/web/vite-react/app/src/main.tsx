import { StrictMode, Suspense, lazy } from 'react'
import { createRoot } from 'react-dom/client'
import './index.css'

// The lazy chunk: Vite emits it as its own file and lists it in dynamicImports.
const Report = lazy(() => import('./Report'))

const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' })
worker.postMessage(21)

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <h1 className="title">lockstep</h1>
    <Suspense fallback={<p>loading</p>}>
      <Report />
    </Suspense>
  </StrictMode>,
)
