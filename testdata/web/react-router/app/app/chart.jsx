export default function Chart() {
  return <div className="chart">chart</div>
}
