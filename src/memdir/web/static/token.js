// The page's key: moved from the address bar's #token=… to this tab's sessionStorage and
// removed from the address bar (history.replaceState) before anything else runs; app.js
// imports this module first.

const TOKEN_KEY = "memdir.token";
(function takeToken() {
  const match = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + location.search + "#/");
  }
})();
export const token = () => sessionStorage.getItem(TOKEN_KEY);
