__turbopack_load_page_chunks__("/_error", [
  "static/chunks/2jtoqma4j-huq.js",
  "static/chunks/0h__6kh36aa07.js",
  "static/chunks/34iadwiy_k_kf.js",
  "static/chunks/turbopack-1aa3j7rwwv161.js"
])
