// Scroll one part of the page into view, once: the default export is the function Streamlit's
// st.components.v2 calls (lens/scroll_js.py mounts it in a run that has something new for the
// learner to read next: a verdict after "Check", the concept check's result, a class's open
// question on a phone). It shows nothing.
//
// `data.target` is the part's class (Streamlit's "st-key-<key>" of a keyed container), and
// `data.nonce` names this request: a request is carried out once, after the script run that drew
// the part has finished (the page is still growing before), and never again on a later mount.
// The part's top is put just below Streamlit's header; a part taller than the window still
// starts at its top. No smooth scrolling: nothing moves by itself for the learner who asked
// their system for reduced motion, and the jump is instant for everyone else too.
// With `data.focus`, the keyboard's focus, when the run took it away (the button pressed is gone
// and the page's body has it), moves to the part's first control — a verdict's fold, whose name
// says right or wrong — so that Tab goes on from there and a screen reader says the verdict.

const WAIT_MS = 100;  // between two looks for the part
const MAX_TRIES = 100;  // at most 10 s: the run may be long (a step's first trace)
const HEADER_PX = 64;  // Streamlit's fixed header above the main pane
// shown again at these times after the first: the run's stale elements above the part are
// removed, and pictures above it take their height, a moment after the run has finished
const AGAIN_MS = [150, 400, 800, 1500];
const LEARNER_EVENTS = ["wheel", "touchstart", "keydown", "pointerdown"];  // the learner's own

const done = (window.__encoderLensScrolled ||= new Set());

function running() {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute("data-test-script-state") === "running";
}

const CONTROLS = 'summary, button, input, select, textarea, a[href], [tabindex="0"]';

function focusIn(part) {
  const now = document.activeElement;
  if (now && now !== document.body) return;  // the learner's focus is somewhere: left there
  const first = part.querySelector(CONTROLS);
  if (first) first.focus({ preventScroll: true });
}

export default function (component) {
  const { target = "", nonce = "", focus = false } = component.data || {};
  if (!target || !nonce || done.has(nonce)) return;
  let tries = 0;
  let timer = null;
  let acted = false;  // the learner's own scrolling (or a key, a tap) always wins
  const stop = () => { acted = true; };
  function show() {
    const part = document.querySelector("." + CSS.escape(target));
    if (!part || acted) return;
    part.style.scrollMarginTop = HEADER_PX + "px";
    part.scrollIntoView({ block: "start", behavior: "auto" });
  }
  function attempt() {
    const part = document.querySelector("." + CSS.escape(target));
    if (part && !running()) {
      done.add(nonce);
      for (const e of LEARNER_EVENTS) window.addEventListener(e, stop, true);
      show();
      if (focus) focusIn(part);
      for (const ms of AGAIN_MS) setTimeout(show, ms);
      setTimeout(() => { for (const e of LEARNER_EVENTS) window.removeEventListener(e, stop, true); },
                 AGAIN_MS[AGAIN_MS.length - 1] + 100);
      return;
    }
    if (++tries < MAX_TRIES) timer = setTimeout(attempt, WAIT_MS);
  }
  attempt();
  return () => { if (timer) clearTimeout(timer); };
}
