self.onmessage=s=>{self.postMessage(2*s.data)};
//# sourceMappingURL=408.bdf92cd7.chunk.js.map