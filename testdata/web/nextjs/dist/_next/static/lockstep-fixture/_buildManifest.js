self.__BUILD_MANIFEST = {
  "/_error": [
    "static/chunks/1lewd9uqrltxs.js"
  ],
  "/docs": [
    "static/chunks/0hiq87pxu9bf5.js"
  ],
  "/docs/setup": [
    "static/chunks/1qtjvhdg3bxf_.js"
  ],
  "__rewrites": {
    "afterFiles": [],
    "beforeFiles": [
      {
        "source": "/next/_next/:path+",
        "destination": "/_next/:path+"
      }
    ],
    "fallback": []
  },
  "sortedPages": [
    "/_app",
    "/_error",
    "/docs",
    "/docs/setup"
  ]
};self.__TURBOPACK_PAGE_BOOTSTRAP = {"/docs":{"otherChunks":["static/chunks/2x36qip6_j_86.js","static/chunks/0h__6kh36aa07.js","static/chunks/34iadwiy_k_kf.js","static/chunks/1bhy7vfpfrycg.css"],"runtimeModuleIds":[10783,20877]},"/docs/setup":{"otherChunks":["static/chunks/329bkbvhzb3nh.js","static/chunks/0h__6kh36aa07.js","static/chunks/34iadwiy_k_kf.js"],"runtimeModuleIds":[10783,9816]},"/_app":{"otherChunks":["static/chunks/15xkhnztgyd-4.js","static/chunks/0h__6kh36aa07.js","static/chunks/34iadwiy_k_kf.js","static/chunks/1zx4cj39v6xr8.css"],"runtimeModuleIds":[10783,56703]},"/_error":{"otherChunks":["static/chunks/2jtoqma4j-huq.js","static/chunks/0h__6kh36aa07.js","static/chunks/34iadwiy_k_kf.js"],"runtimeModuleIds":[10783,80184]}};self.__TURBOPACK_CHUNK_LOADING_GLOBAL = "TURBOPACK";self.__BUILD_MANIFEST_CB && self.__BUILD_MANIFEST_CB()