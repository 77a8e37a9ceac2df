__turbopack_load_page_chunks__("/_app", [
  "static/chunks/15xkhnztgyd-4.js",
  "static/chunks/0h__6kh36aa07.js",
  "static/chunks/34iadwiy_k_kf.js",
  "static/chunks/1zx4cj39v6xr8.css",
  "static/chunks/turbopack-1aa3j7rwwv161.js"
])
