import './index.css'

const root = document.getElementById('root')
root.textContent = 'lockstep'

// The lazy chunk: webpack emits it (and its CSS) as their own files.
document.addEventListener('click', () => {
  import(/* webpackChunkName: "report" */ './report.js').then((m) => m.show(root))
})

const worker = new Worker(new URL('./worker.js', import.meta.url))
worker.postMessage(21)
