// The app's own notice when its page loses the server (every replica down, the network gone),
// in the page's language, in place of Streamlit's English "Connection error" dialog, and the
// way back as soon as the server answers (lens/connection_js.py).
//
// Streamlit writes its connection's state on the app's root (`data-test-connection-state`:
// CONNECTED, PINGING_SERVER, CONNECTING, …). Once it has left CONNECTED for `grace_ms`, this
// shows `data.lost` in a banner (role="alert": a screen reader says it) and hides Streamlit's
// dialogs (nothing in one can act while the server is away), then asks the server's health URL
// every `poll_ms`. Streamlit's own retries wait up to 4 s between tries; as soon as the health
// URL answers 200 the banner says `data.back` and, unless Streamlit has reconnected by itself
// within `reload_ms`, the page is loaded again: its link names its page and settings, a class's
// student by the token in it, the teacher by its cookie. Nothing polls while connected.
//
// The default export is the function Streamlit's st.components.v2 calls on every mount; what
// must outlive one mount (the watcher, the state) is kept on `window`.

const ROOT = '[data-testid="stApp"]';
const STATE = "data-test-connection-state";
const OFFLINE = "el-offline"; // on <html> while the notice is up: Streamlit's dialogs hidden
// on <html> from the moment Streamlit's connection is not CONNECTED until a second after it is
// again: its "Connection error" dialog never shows, not even before the notice's grace ends or
// while it goes away after a reconnect (nothing in a dialog can act with the server away)
const AWAY = "el-away";
const AWAY_AFTER_MS = 1000;
const BANNER = "el-connection-notice";
// in the document's head (the component's own styles stay inside its shadow root): the banner
// at the top of the window, over everything; Streamlit's dialogs out of sight while it is up
const STYLE = `
html.${OFFLINE} [data-testid="stDialog"],
html.${AWAY} [data-testid="stDialog"] { display: none !important; }
#${BANNER} {
  position: fixed; top: 0; left: 0; right: 0; z-index: 1000010;
  padding: 0.9rem 1.25rem; font-size: clamp(1.1rem, 1.6vw, 2.2rem); line-height: 1.5;
  text-align: center;
  background: #fff4d6; color: #16181f; border-bottom: 3px solid #b35900;
  box-shadow: 0 2px 8px rgba(0, 0, 0, 0.25);
}`;

function watcher() {
  if (window.elConnection) return window.elConnection;
  const w = {
    texts: { lost: "", back: "", lang: "" },
    health: "/_stcore/health",
    graceMs: 1500,
    pollMs: 500,
    reloadMs: 1000,
    offline: false,
    pending: undefined,
    poll: undefined,
    backAt: 0,
  };
  window.elConnection = w;
  const style = document.createElement("style");
  style.textContent = STYLE;
  document.head.appendChild(style);

  function banner(text) {
    let el = document.getElementById(BANNER);
    if (!el) {
      el = document.createElement("div");
      el.id = BANNER;
      el.setAttribute("role", "alert");
      document.body.appendChild(el);
    }
    el.lang = w.texts.lang || document.documentElement.lang;
    el.textContent = text;
  }

  function online() {
    clearTimeout(w.pending);
    w.pending = undefined;
    clearTimeout(w.poll);
    w.poll = undefined;
    w.offline = false;
    w.backAt = 0;
    document.documentElement.classList.remove(OFFLINE);
    document.getElementById(BANNER)?.remove();
  }

  async function ask() {
    w.poll = undefined;
    if (!w.offline) return;
    let up = false;
    try {
      const r = await fetch(w.health, { cache: "no-store" });
      up = r.ok;
    } catch {
      up = false;
    }
    if (!w.offline) return;
    if (up) {
      if (!w.backAt) {
        w.backAt = Date.now();
        banner(w.texts.back);
      } else if (Date.now() - w.backAt >= w.reloadMs) {
        location.reload(); // Streamlit has not reconnected by itself: a new page, now
        return;
      }
    } else {
      w.backAt = 0;
      banner(w.texts.lost);
    }
    w.poll = setTimeout(ask, up ? Math.min(w.pollMs, w.reloadMs) : w.pollMs);
  }

  function lost() {
    w.pending = undefined;
    if (w.offline) return;
    w.offline = true;
    document.documentElement.classList.add(OFFLINE);
    banner(w.texts.lost);
    ask();
  }

  function seen(state) {
    const html = document.documentElement;
    clearTimeout(w.awayEnd);
    if (state === "CONNECTED") {
      online();
      w.awayEnd = setTimeout(() => html.classList.remove(AWAY), AWAY_AFTER_MS);
      return;
    }
    html.classList.add(AWAY);
    if (!w.offline && w.pending === undefined) {
      w.pending = setTimeout(lost, w.graceMs);
    }
  }

  const root = document.querySelector(ROOT);
  if (root) {
    new MutationObserver(() => seen(root.getAttribute(STATE))).observe(
      root, { attributes: true, attributeFilter: [STATE] });
  }
  return w;
}

export default function (component) {
  const { lost = "", back = "", lang = "", health = "", grace_ms: graceMs = 1500,
    poll_ms: pollMs = 500, reload_ms: reloadMs = 1000 } = component.data || {};
  const w = watcher();
  w.texts = { lost, back, lang };
  if (health) w.health = health;
  Object.assign(w, { graceMs, pollMs, reloadMs });
  return undefined;
}
