self.onmessage = (e) => {
  self.postMessage(e.data * 2)
}
