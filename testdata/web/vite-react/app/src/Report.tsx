import './report.css'

export default function Report() {
  return <p className="report">every asset on the CDN</p>
}
