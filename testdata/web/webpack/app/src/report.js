import './report.css'

export function show(root) {
  const p = document.createElement('p')
  p.className = 'report'
  p.textContent = 'every asset on the CDN'
  root.appendChild(p)
}
