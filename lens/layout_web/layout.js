// The page's layout behaviours, done in the browser (the server never learns the window's size
// or its scrolling): the default export is the function Streamlit's st.components.v2 calls
// (lens/layout_js.py mounts it once per page, at the end of the sidebar). It shows nothing.
//
//  1. Wide formulas: every displayed formula (KaTeX) of the main pane wider than its column is
//     drawn smaller until it fits, down to `data.min_scale` of its size; one that still scrolls
//     sideways is made focusable (tabindex 0), so that the keyboard can scroll it.
//  2. A new page opens at its top: when location.pathname changes (Next / Previous at the top or
//     the bottom, a navigation link, the browser's back), the main pane (Streamlit's stMain,
//     which scrolls inside itself) is scrolled to 0, and kept there while the new page's content
//     arrives, until its script run has finished; a rerun of the same page keeps its position.
//     Any wheel, touch, key or pointer press of the learner ends it at once.
//  3. A tablet's sidebar: between Streamlit's own mobile breakpoint (`data.mobile`, where it
//     collapses the sidebar itself) and `data.wide`, the sidebar starts collapsed (a click on
//     Streamlit's own collapse control), unless the learner opened or closed it: then it is left
//     as the learner put it. Until that is decided, tablet_sidebar.css keeps the sidebar out of
//     the page; once it is (collapsed, or left as it is), the root's data-el-sidebar lets it back.
//
//  4. The page's language: `<html lang>` (`data.lang`), and this browser's last language kept in
//     a cookie (`data.lang_cookie` = `data.kept_lang`) for a class's link that names none. With
//     `data.only_lang` (a class's projector, framed by nothing) that is all it does.
//
// What must outlive one mount (the path last seen, the learner's choice) is kept on `window`:
// the component is mounted again on every page.

const SETTLE_MS = 400;  // kept at the top this long after the new page's run has finished
const MAX_TOP_MS = 20000;  // and never longer than this after the change of page
const SIDEBAR_KEY = "stSidebarCollapsed-";  // Streamlit's stored choice (localStorage, a prefix)

const state = (window.__encoderLensLayout ||= {
  path: location.pathname,  // the page the last check saw
  top: null,  // while a new page is kept at its top: {t0, ran, done, timer}
  learnerChose: false,  // the learner pressed the sidebar's collapse or expand control
  collapsing: false,  // our press of the collapse control awaits Streamlit's redraw
  choiceKept: false,  // the cookie that says the learner chose is written
});

const main = () => document.querySelector('[data-testid="stMain"]');

// --- 1. wide formulas --------------------------------------------------------------------------
function fitFormulas(min) {
  const m = main();  // looked up each time: it may come later
  if (!m) return;
  for (const box of m.querySelectorAll(".katex-display")) {
    const k = box.querySelector(":scope > .katex");
    if (!k) continue;
    k.style.fontSize = "";  // its own size first
    const need = box.scrollWidth, have = box.clientWidth;
    if (have > 0 && need > have + 1) {
      const px = parseFloat(getComputedStyle(k).fontSize);
      k.style.fontSize = (px * Math.max(min, (have - 2) / need)).toFixed(2) + "px";
      k.dataset.fitted = "1";
    } else {
      delete k.dataset.fitted;
    }
    // still too wide at the smallest size: it scrolls sideways, so the keyboard must reach it
    // (WCAG 2.1.1; axe's scrollable-region-focusable)
    if (box.scrollWidth > box.clientWidth + 1) box.setAttribute("tabindex", "0");
    else box.removeAttribute("tabindex");
  }
}

// --- 2. a new page at its top ------------------------------------------------------------------
function toTop() {
  const m = main();
  if (m && m.scrollTop !== 0) m.scrollTop = 0;
  if (window.scrollY !== 0) window.scrollTo(0, 0);
}

function endTop() {
  if (state.top) clearTimeout(state.top.timer);
  state.top = null;
}

function startTop() {
  endTop();
  state.top = { t0: performance.now(), ran: false, done: false, timer: 0 };
  state.top.timer = setTimeout(endTop, MAX_TOP_MS);
  toTop();
}

function keepTop() {
  if (location.pathname !== state.path) {
    state.path = location.pathname;
    startTop();
  }
  const T = state.top;
  if (!T) return;
  toTop();
  const app = document.querySelector('[data-testid="stApp"]');
  const run = app ? app.getAttribute("data-test-script-state") : null;
  if (run === "running") T.ran = true;
  const h1 = document.querySelector('[data-testid="stMain"] h1');
  // finished: the new page's run was seen running and is not any more (or, for a run too quick
  // to be seen, nothing runs a second after the change), and its title is there
  const finished = run !== "running" && h1 && (T.ran || performance.now() - T.t0 > 1000);
  if (finished && !T.done) {
    T.done = true;
    clearTimeout(T.timer);
    T.timer = setTimeout(() => { toTop(); endTop(); }, SETTLE_MS);  // pictures may still load
  }
}

// the learner scrolls, taps, types or clicks: never fight that
const LEARNER_EVENTS = ["wheel", "touchstart", "keydown", "pointerdown"];
const learnerActs = (ev) => { if (ev.isTrusted) endTop(); };

// --- 3. a tablet's sidebar ---------------------------------------------------------------------
function storedChoice() {
  try {
    return Object.keys(window.localStorage).some((k) => k.startsWith(SIDEBAR_KEY));
  } catch {
    return false;  // no storage: only this page's own record counts
  }
}

function forgetOurChoice(before) {
  // Streamlit stores every press of its control as the learner's choice; ours was not one:
  // keep what was stored before it (nothing), so that a wide window still opens the sidebar
  try {
    for (const k of Object.keys(window.localStorage)) {
      if (k.startsWith(SIDEBAR_KEY) && !before.has(k)) window.localStorage.removeItem(k);
    }
  } catch {
    // no storage, nothing stored
  }
}

// the sidebar's start is decided: tablet_sidebar.css holds it out of the page no longer
const releaseSidebar = () => { document.documentElement.dataset.elSidebar = "decided"; };
const RELEASE_FRAMES = 30;  // after our click, the frames we wait for Streamlit to collapse it

// the learner opened or closed the sidebar (Streamlit remembers it): a cookie tells the server,
// which then sends no hold (lens/layout_js.py), so that the learner's own sidebar is never
// taken away for a moment on a reload
function keepChoice(cookie) {
  if (!cookie || state.choiceKept) return;
  state.choiceKept = true;
  const secure = location.protocol === "https:" ? "; Secure" : "";
  document.cookie = `${cookie}=1; Max-Age=31536000; Path=/; SameSite=Strict${secure}`;
}

function fitSidebar(mobile, wide, cookie) {
  const chose = state.learnerChose || storedChoice();
  if (chose) keepChoice(cookie);
  const w = window.innerWidth;
  if (w <= mobile || w >= wide || chose) {
    releaseSidebar();
    return;
  }
  const bar = document.querySelector('[data-testid="stSidebar"]');
  const button = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
  if (!bar || !button || state.collapsing) return;  // not drawn yet, or already pressed
  if (bar.getAttribute("data-collapsed") === "true") {
    releaseSidebar();
    return;
  }
  let before = new Set();
  try { before = new Set(Object.keys(window.localStorage)); } catch { /* no storage */ }
  button.click();  // Streamlit's own control: its expand button stays where the learner looks
  forgetOurChoice(before);
  // let the sidebar back once Streamlit has drawn it collapsed (it is hidden, so no slide
  // shows), or after RELEASE_FRAMES frames in any case
  state.collapsing = true;
  let frames = 0;
  const released = () => {
    if (bar.getAttribute("data-collapsed") === "true" || ++frames >= RELEASE_FRAMES) {
      state.collapsing = false;
      releaseSidebar();
    } else {
      requestAnimationFrame(released);
    }
  };
  requestAnimationFrame(released);
}

const CONTROLS = '[data-testid="stExpandSidebarButton"], [data-testid="stSidebarCollapseButton"]';
const learnerToggles = (ev) => {
  const t = ev.target;
  if (ev.isTrusted && t instanceof Element && t.closest(CONTROLS)) state.learnerChose = true;
};

// --- 4. the language ---------------------------------------------------------------------------
function keepLanguage(cookie, value) {
  if (!cookie || !/^[a-z]{2,8}$/.test(value)) return;
  const secure = location.protocol === "https:" ? "; Secure" : "";
  document.cookie = `${cookie}=${value}; Max-Age=31536000; Path=/; SameSite=Lax${secure}`;
}

// --- mounted once per page ---------------------------------------------------------------------
export default function (component) {
  const { min_scale: min = 0.5, mobile = 768, wide = 1100, chose_cookie: cookie = "",
    lang = "", lang_cookie: langCookie = "", kept_lang: keptLang = "",
    only_lang: onlyLang = false } = component.data || {};
  if (lang) document.documentElement.lang = lang;  // the page's language (index.html says "en")
  keepLanguage(langCookie, keptLang);
  if (onlyLang) return undefined;
  let queued = false;
  function check() {
    queued = false;
    keepTop();
    fitSidebar(mobile, wide, cookie);
    fitFormulas(min);
  }
  const later = () => { if (!queued) { queued = true; requestAnimationFrame(check); } };
  // content drawn or redrawn anywhere (style changes are attributes: not watched, but the script
  // run's state is; the explorer's own repaints on hover are left out), a resized window, the
  // browser's back and forward
  const outside = (r) => {
    const e = r.target.nodeType === 1 ? r.target : r.target.parentElement;
    return !(e && e.closest(".el-root"));
  };
  const mo = new MutationObserver((records) => { if (records.some(outside)) later(); });
  mo.observe(document.body, { childList: true, subtree: true, characterData: true });
  const app = document.querySelector('[data-testid="stApp"]');
  if (app) mo.observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
  const ro = new ResizeObserver(later);  // the window or the sidebar changed the width
  ro.observe(document.documentElement);
  window.addEventListener("popstate", later);
  // a web font arriving (KaTeX's) changes a formula's width with no mutation nor resize: fitted
  // and made focusable again then, or a formula left too wide would scroll out of the keys' reach
  document.fonts?.addEventListener("loadingdone", later);
  for (const e of LEARNER_EVENTS) window.addEventListener(e, learnerActs, true);
  window.addEventListener("click", learnerToggles, true);
  check();
  return () => {
    mo.disconnect();
    ro.disconnect();
    window.removeEventListener("popstate", later);
    document.fonts?.removeEventListener("loadingdone", later);
    for (const e of LEARNER_EVENTS) window.removeEventListener(e, learnerActs, true);
    window.removeEventListener("click", learnerToggles, true);
  };
}
