// Only the about page has this island, hydrated when it is visible.
export default function Chart() {
  return <div class="chart">chart</div>
}
