__turbopack_load_page_chunks__("/docs", [
  "static/chunks/2x36qip6_j_86.js",
  "static/chunks/0h__6kh36aa07.js",
  "static/chunks/34iadwiy_k_kf.js",
  "static/chunks/1bhy7vfpfrycg.css",
  "static/chunks/turbopack-1aa3j7rwwv161.js"
])
