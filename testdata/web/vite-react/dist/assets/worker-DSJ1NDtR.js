(function(){"use strict";self.onmessage=s=>{self.postMessage(s.data*2)}})();
