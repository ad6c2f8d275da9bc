// The attention explorer's browser side: the default export is the function Streamlit's
// st.components.v2 calls with the component (lens/explorer.py mounts it; its html and css are
// explorer.html and explorer.css beside this file). Nothing here is built from data: every
// number, label and pixel arrives in `data`, and every label is written with textContent.
//
// `data` is one bytes blob (built by lens.explorer.payload): uint32 (little-endian) header
// length, the JSON header, then at the offsets the header gives: the colour map (256 × RGB,
// uint8), the picture ([side, side, 3] uint8) and, when there are maps, the attention rows
// ([rows, cols, N, N] float16, scaled by `header.scale`) and, for a model with prefix tokens
// (CLS), each row's weight on them ([rows, cols, N], the same way).
//
// With `mode` "similarity" (lens.explorer.similarity_payload) there is one map: the cosine
// similarity of every patch's features to the hovered patch's, u_i · u_j, computed here on
// every hover from the patches' unit rows ([N, d] float16 at `unit_at`, normalised again after
// decoding so that a patch's own value is 1), on the scale of the pointed row's min … max
// (its own 1 at the top) or, with the scale button, −1 … 1; the legend says which.

let F16 = null;  // float16 bit pattern -> float32, built once
function f16table() {
  if (F16) return F16;
  F16 = new Float32Array(65536);
  for (let b = 0; b < 65536; b++) {
    const s = b & 0x8000 ? -1 : 1, e = (b >> 10) & 0x1f, m = b & 0x3ff;
    F16[b] = e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity)
      : s * (1 + m / 1024) * 2 ** (e - 15);
  }
  return F16;
}

function parse(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true);
  const head = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + n)));
  const base = bytes.byteOffset + 4 + n;
  head.lut = new Uint8Array(bytes.buffer, base + head.lut_at, 768);
  head.img = new Uint8Array(bytes.buffer, base + head.image_at, head.side * head.side * 3);
  if (head.mode === "similarity") {  // the unit rows, decoded once to float32 and renormalised
    const count = head.N * head.d, start = base + head.unit_at;
    head.unit = start % 2 ? new Uint16Array(bytes.slice(start - bytes.byteOffset,
      start - bytes.byteOffset + 2 * count).buffer) : new Uint16Array(bytes.buffer, start, count);
  } else if (head.rows) {
    const count = head.rows * head.cols * head.N * head.N;
    const start = base + head.maps_at;
    // copy when unaligned: Uint16Array needs an even offset
    head.maps = start % 2 ? new Uint16Array(bytes.slice(start - bytes.byteOffset,
      start - bytes.byteOffset + 2 * count).buffer) : new Uint16Array(bytes.buffer, start, count);
    if (head.prefix_at !== undefined) {  // each row's weight on the prefix tokens (CLS)
      const pc = head.rows * head.cols * head.N, ps = base + head.prefix_at;
      head.prefix = ps % 2 ? new Uint16Array(bytes.slice(ps - bytes.byteOffset,
        ps - bytes.byteOffset + 2 * pc).buffer) : new Uint16Array(bytes.buffer, ps, pc);
    }
  }
  return head;
}

function el(tag, cls, parent) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (parent) parent.appendChild(e);
  return e;
}

let TABLES = 0;  // explorers' tables made on this page: each its own id
// the explorers whose table is open (`tableKey`): a commit's rerun mounts the component anew
// (a new root, from a module imported anew), and an open table stays open
const openTables = () => {
  window.encoderLensOpenTables = window.encoderLensOpenTables || new Set();
  return window.encoderLensOpenTables;
};

// the explorer whose picker has the keyboard's focus (its key), kept across a redraw: a
// commit's rerun redraws the explorer, or mounts it anew, and the focus is given back
const focusKept = (window.__encoderLensPickerFocus ||= { key: null });

// a name for an explorer that outlives a remount: its Streamlit key's class ("st-key-…")
function keyOf(root, fallback) {
  const host = root.getRootNode().host || root;
  const keyed = host.closest('[class*="st-key-"]');
  const m = keyed && keyed.className.toString().match(/\bst-key-\S+/);
  return m ? m[0] : fallback;
}

function fmt(w) {
  if (w === 0) return "0";
  return Math.abs(w) >= 1e-3 ? Number(w.toPrecision(3)).toString() : w.toExponential(2);
}

export default function (component) {
  const { data, setStateValue, parentElement } = component;
  const root = parentElement.querySelector(".el-root");
  if (!root || !data || !data.length) return;
  const wasZoom = Number(root.dataset.zoom || -1);  // a zoom open before this redraw
  const name = keyOf(root, component.key);
  const hadFocus = !!name && focusKept.key === name;
  root.replaceChildren();
  const H = parse(data);
  // which explorer this is, the same from one mount to the next (the component's own key is
  // not): its component and its maps' title, the query left out ("{i}")
  const tableKey = `${component.name}/${H.text.title || ""}/${H.rows}x${H.cols}`;
  const wasTable = openTables().has(tableKey);  // the table open before this mount
  const G = H.G, N = H.N, side = H.side, k = side / G;
  const f16 = f16table();
  const SIM = H.mode === "similarity", D = H.d || 0;
  let U = null;  // [N, d] float32 unit rows (similarity)
  if (SIM) {
    U = new Float32Array(N * D);
    for (let i = 0; i < N; i++) {
      let ss = 0;
      for (let t = i * D; t < (i + 1) * D; t++) { U[t] = f16[H.unit[t]]; ss += U[t] * U[t]; }
      const inv = ss > 0 ? 1 / Math.sqrt(ss) : 0;
      for (let t = i * D; t < (i + 1) * D; t++) U[t] *= inv;
    }
  }
  let query = H.query, hover = H.query, keyTimer = null, nonce = 0;
  root.classList.toggle("el-only", !H.rows);
  root.classList.toggle("el-sim", SIM);
  root.dataset.committed = String(query);
  root.dataset.hover = String(hover);
  root.dataset.big = "-1";
  const tip = el("div", "el-tip", root);

  // --- the picker: the image, its patch grid, the query and the hovered patch --------------
  const pick = el("div", "el-pick", root);
  const pc = el("canvas", "", pick);
  pc.width = pc.height = side;
  pc.tabIndex = 0;
  pc.setAttribute("role", "img");
  pc.setAttribute("aria-label", H.text.aria);
  pc.dataset.testid = "el-picker";
  pc.addEventListener("focus", () => { focusKept.key = name; });
  pc.addEventListener("blur", () => setTimeout(() => {  // moved away, not redrawn
    if (pc.isConnected && focusKept.key === name) focusKept.key = null;
  }, 0));
  el("div", "el-hint", pick).textContent = H.text.hint;
  // what the picture shows for the patch pointed at, in words (read by a screen reader as the
  // query moves: the patch, and each map's strongest patches with their weights)
  const desc = el("p", "el-sr", pick);
  desc.setAttribute("aria-live", "polite");
  desc.dataset.testid = "el-description";
  // a sign that a tap changed maps out of view (on a phone they are below the picker): a
  // button that stays at the bottom of the view while the picker is in it, and scrolls to them
  const below = H.rows && H.text.below ? el("button", "el-below", pick) : null;
  if (below) {
    below.type = "button";
    below.dataset.testid = "el-below";
    below.textContent = H.text.below;
    below.hidden = true;
  }
  // on a touch screen with small patches, a tap opens a finger-sized zoom of the patches
  // around it (ZOOM × ZOOM); a tap in the zoom chooses, a tap on the picture moves it
  const ZOOM = Math.min(G, 5), FINGER_PX = 36;
  const zoom = H.text.zoom ? el("div", "el-zoom", pick) : null;
  let zc = null, zctx = null, zoomAt = -1;  // the patch at the zoom's top left (-1: closed)
  if (zoom) {  // over the picture, as large as it: nothing on the page moves
    zoom.hidden = true;
    zc = el("canvas", "", zoom);
    zc.dataset.testid = "el-zoom";
    zctx = zc.getContext("2d");
    el("div", "el-zoom-tip", zoom).textContent = H.text.zoom;
    const close = el("button", "el-zoom-close", zoom);
    close.type = "button";
    close.textContent = "×";
    close.setAttribute("aria-label", H.text.zoom_close);
    close.dataset.testid = "el-zoom-close";
    close.addEventListener("click", () => { closeZoom(); setHover(query); });
  }
  const pctx = pc.getContext("2d");
  const base = pctx.createImageData(side, side);
  for (let p = 0, q = 0; p < side * side; p++, q += 3) {
    base.data[4 * p] = H.img[q]; base.data[4 * p + 1] = H.img[q + 1];
    base.data[4 * p + 2] = H.img[q + 2]; base.data[4 * p + 3] = 255;
  }
  function drawPicker() {
    pctx.putImageData(base, 0, 0);
    pctx.lineWidth = Math.max(1, side / 320);
    pctx.strokeStyle = "rgba(255, 204, 0, 0.8)";  // GRID_COLOUR
    pctx.beginPath();
    for (let g = 1; g < G; g++) {
      pctx.moveTo(g * k, 0); pctx.lineTo(g * k, side);
      pctx.moveTo(0, g * k); pctx.lineTo(side, g * k);
    }
    pctx.stroke();
    const box = (i, colour, w) => {
      pctx.lineWidth = w; pctx.strokeStyle = colour;
      pctx.strokeRect((i % G) * k + w / 2, Math.floor(i / G) * k + w / 2, k - w, k - w);
    };
    if (hover !== query) box(hover, "rgba(255, 255, 255, 0.9)", Math.max(1, k / 8));
    box(query, "#00e5ff", Math.max(2, k / 6));  // QUERY_COLOUR
    // a lesson's question names a patch: framed in magenta, dashed, over the rest
    if (H.mark >= 0 && H.mark < G * G) {
      pctx.setLineDash([Math.max(2, k / 5), Math.max(2, k / 8)]);
      box(H.mark, "#ff3df5", Math.max(2, k / 6));  // MARK_COLOUR
      pctx.setLineDash([]);
    }
  }

  // the zoom: its ZOOM × ZOOM patches of the picker as drawn (grid, query, mark), each numbered
  function drawZoom() {
    if (!zoom || zoomAt < 0) return;
    const cell = Math.max(48, Math.round(k)), n = ZOOM * cell;
    if (zc.width !== n) zc.width = zc.height = n;
    zctx.imageSmoothingEnabled = false;
    const r0 = Math.floor(zoomAt / G), c0 = zoomAt % G;
    zctx.drawImage(pc, c0 * k, r0 * k, ZOOM * k, ZOOM * k, 0, 0, n, n);
    zctx.font = `${Math.round(cell / 4)}px sans-serif`;
    zctx.textBaseline = "top";
    for (let r = 0; r < ZOOM; r++) for (let c = 0; c < ZOOM; c++) {
      const label = String((r0 + r) * G + c0 + c), x = c * cell + 3, y = r * cell + 3;
      const w = zctx.measureText(label).width;
      zctx.fillStyle = "rgba(0, 0, 0, 0.6)";
      zctx.fillRect(x - 2, y - 2, w + 4, cell / 4 + 4);
      zctx.fillStyle = "#fff";
      zctx.fillText(label, x, y);
    }
  }
  const openZoom = (i) => {  // centred on patch i, kept inside the grid
    const at = (v) => Math.min(G - ZOOM, Math.max(0, v - Math.floor(ZOOM / 2)));
    zoomAt = at(Math.floor(i / G)) * G + at(i % G);
    zoom.hidden = false;
    root.dataset.zoom = String(zoomAt);
    drawZoom();
  };
  const closeZoom = () => {
    if (!zoom) return;
    zoomAt = -1;
    zoom.hidden = true;
    root.dataset.zoom = "-1";
  };

  // --- the maps: one canvas per head (and layer); each map its own colour scale (its top
  // colour = its largest weight: a head's pattern shows however peaked another head is), or,
  // with the scale button, one scale shared by all (to compare heads' weights) -------------
  const panels = [];
  let bar = null, ticks = null, title = null, grid = null, scaleButton = null;
  let shared = !!H.shared, fixed = false;  // similarity: the row's min … max, or −1 … 1
  let barLab = null;
  const ps = SIM ? side  // one map, as large as the picture
    : Math.min(side, G * Math.max(1, Math.floor(112 / G)));  // panel side in pixels
  const greyAt = (s) => {  // the image's grey, nearest-resampled to a panel of side s
    const g = new Float32Array(s * s);
    for (let y = 0; y < s; y++) for (let x = 0; x < s; x++) {
      const q = 3 * (Math.floor(y * side / s) * side + Math.floor(x * side / s));
      g[y * s + x] = (H.img[q] + H.img[q + 1] + H.img[q + 2]) / 3;
    }
    return g;
  };
  let grey = null, big = null, uni = null;
  let bigPanel = -1;  // the panel shown large (a click on a map opens it, a click closes it)
  if (H.rows) {
    const maps = el("div", "el-maps", root);
    title = el("div", "el-title", maps);
    grey = greyAt(ps);
    const bs = side;  // the large panel: the picture's own resolution
    big = { box: el("div", "el-big", maps), s: bs, grey: greyAt(bs) };
    big.lab = el("div", "el-lab", big.box);
    big.cv = el("canvas", "", big.box);
    big.cv.width = big.cv.height = bs;
    big.ctx = big.cv.getContext("2d");
    big.img = new ImageData(bs, bs);
    big.box.style.display = "none";
    grid = el("div", "el-grid", maps);
    const table = H.row_labels.length > 0;
    if (table) {
      el("div", "", grid);
      for (let c = 0; c < H.cols; c++) el("div", "el-lab", grid).textContent = H.col_labels[c];
    }
    for (let r = 0; r < H.rows; r++) {
      if (table) el("div", "el-row", grid).textContent = H.row_labels[r];
      for (let c = 0; c < H.cols; c++) {
        const cell = el("div", "el-cell", grid);
        if (!table) el("div", "el-lab", cell).textContent = H.titles[c];
        const cv = el("canvas", "", cell);
        cv.width = cv.height = ps;
        cv.dataset.panel = String(r * H.cols + c);
        panels.push({ r, c, cv, ctx: cv.getContext("2d"), img: new ImageData(ps, ps) });
      }
    }
    const layout = () => {
      const w = maps.clientWidth || 320;
      if (table) {
        grid.style.gridTemplateColumns = `max-content repeat(${H.cols}, minmax(0, 1fr))`;
      } else if (SIM) {
        grid.style.gridTemplateColumns = "minmax(0, 360px)";
      } else {
        const n = Math.max(1, Math.min(H.cols, 4, Math.floor(w / 96)));
        grid.style.gridTemplateColumns = `repeat(${n}, minmax(0, 1fr))`;
      }
    };
    layout();
    const ro = new ResizeObserver(layout);
    ro.observe(maps);
    const b = el("div", "el-bar", maps);
    barLab = el("div", "el-lab", b);
    barLab.textContent = H.text.colorbar;
    const barbox = el("div", "el-barbox", b);
    bar = el("canvas", "", barbox);
    uni = el("div", "el-uni", barbox);  // the uniform weight 1/N, as on the server's bars
    el("span", "", uni).textContent = H.uniform && H.uniform !== 1 / N
      ? "1/" + String(Math.round(1 / H.uniform)) : "1/N";
    bar.width = 256; bar.height = 1;
    const bctx = bar.getContext("2d"), bimg = bctx.createImageData(256, 1);
    for (let i = 0; i < 256; i++) {
      bimg.data.set([H.lut[3 * i], H.lut[3 * i + 1], H.lut[3 * i + 2], 255], 4 * i);
    }
    bctx.putImageData(bimg, 0, 0);
    ticks = el("div", "el-ticks", b);
    for (let i = 0; i < 3; i++) el("span", "", ticks);
    scaleButton = el("button", "el-scale", b);
    scaleButton.type = "button";
    scaleButton.dataset.testid = "el-scale";
    scaleButton.addEventListener("click", () => {
      if (SIM) fixed = !fixed; else shared = !shared;
      drawMaps();
    });
    if (H.text.enlarge) el("div", "el-note", b).textContent = H.text.enlarge;
    root._cleanup = () => ro.disconnect();
  }

  const row = (panel, i) => (panel * N + i) * N;  // offset of attn row i of a panel
  let vmax = 1;
  const colour = new Uint8Array(3 * N), opacity = new Float32Array(N);
  const pmax = new Float32Array(Math.max(1, H.rows * H.cols));  // each map's largest weight
  const cur = new Float32Array(N);  // the values of the map being drawn
  // the values panel p shows for the hovered patch: its attention row, or (similarity) the
  // cosines u_hover · u_j, N dot products of d terms
  function fill(p) {
    if (SIM) {
      const a = hover * D;
      for (let j = 0; j < N; j++) {
        let sum = 0;
        for (let t = 0, b = j * D; t < D; t++) sum += U[a + t] * U[b + t];
        cur[j] = Math.min(1, Math.max(-1, sum));
      }
      return;
    }
    const o = row(p, hover);
    for (let j = 0; j < N; j++) cur[j] = f16[H.maps[o + j]];
  }
  // one panel's map (its values in `cur`) over the grey picture, as `figures.overlay_rgb`: the
  // colour's opacity follows the level (value − lo) / (hi − lo), alpha · (0.15 + 0.85 · level),
  // so the photo shows where it is low
  function drawPanel(ctx, img, s, g, lo, hi) {
    const a = H.alpha, lut = H.lut, d = img.data, sk = s / G;
    for (let j = 0; j < N; j++) {
      const level = Math.min(1, Math.max(0, (cur[j] - lo) / (hi - lo)));
      const v = Math.round(level * 255);
      colour[3 * j] = lut[3 * v]; colour[3 * j + 1] = lut[3 * v + 1];
      colour[3 * j + 2] = lut[3 * v + 2];
      opacity[j] = a * (0.15 + 0.85 * level);
    }
    for (let y = 0; y < s; y++) {
      const gy = Math.floor(y / sk) * G;
      for (let x = 0; x < s; x++) {
        const j = gy + Math.floor(x / sk), q = 4 * (y * s + x), op = opacity[j];
        const gg = (1 - op) * g[y * s + x];
        d[q] = gg + op * colour[3 * j]; d[q + 1] = gg + op * colour[3 * j + 1];
        d[q + 2] = gg + op * colour[3 * j + 2]; d[q + 3] = 255;
      }
    }
    ctx.putImageData(img, 0, 0);
    ctx.lineWidth = Math.max(1, sk / 6);
    ctx.strokeStyle = "#00e5ff";  // the query patch (the hovered one)
    ctx.strokeRect((hover % G) * sk + 0.5, Math.floor(hover / G) * sk + 0.5, sk - 1, sk - 1);
  }
  function drawSimilarity() {
    fill(0);
    let mn = 1, mx = -1;
    for (let j = 0; j < N; j++) { mn = Math.min(mn, cur[j]); mx = Math.max(mx, cur[j]); }
    const lo = fixed ? -1 : mn, hi = fixed ? 1 : (mx > mn ? mx : mn + 1e-6);
    drawPanel(panels[0].ctx, panels[0].img, ps, grey, lo, hi);
    uni.style.display = "none";
    title.textContent = H.text.title.replace("{i}", String(hover));
    barLab.textContent = fixed ? H.text.colorbar : H.text.colorbar_row;
    ticks.children[0].textContent = fmt(lo);
    ticks.children[1].textContent = fmt((lo + hi) / 2);
    ticks.children[2].textContent = fmt(hi);
    scaleButton.textContent = fixed ? H.text.to_row : H.text.to_fixed;
    root.dataset.scale = fixed ? "fixed" : "row";
  }
  function drawMaps() {
    if (!H.rows) return;
    const t0 = performance.now();
    if (SIM) {
      drawSimilarity();
      root.dataset.paintMs = (performance.now() - t0).toFixed(3);
      root.dataset.paints = String(Number(root.dataset.paints || 0) + 1);
      return;
    }
    vmax = 0;
    for (let p = 0; p < panels.length; p++) {
      const o = row(p, hover);
      let m = 0;
      for (let j = 0; j < N; j++) m = Math.max(m, f16[H.maps[o + j]]);
      pmax[p] = m > 0 ? m : 1;
      vmax = Math.max(vmax, m);
    }
    vmax = vmax > 0 ? vmax : 1;
    for (let p = 0; p < panels.length; p++) {
      fill(p);
      drawPanel(panels[p].ctx, panels[p].img, ps, grey, 0, shared ? vmax : pmax[p]);
    }
    if (bigPanel >= 0) {
      fill(bigPanel);
      drawPanel(big.ctx, big.img, big.s, big.grey, 0, shared ? vmax : pmax[bigPanel]);
      const P = panels[bigPanel];
      big.lab.textContent = H.row_labels.length
        ? `${H.row_labels[P.r]}, ${H.col_labels[P.c]}` : H.titles[P.c];
    }
    const real = vmax / H.scale, u = H.uniform || 1 / N;
    uni.style.display = shared && u <= real ? "block" : "none";  // 1/N: on a shared scale
    uni.style.left = (100 * u / real).toFixed(2) + "%";
    title.textContent = H.text.title.replace("{i}", String(hover));
    ticks.children[0].textContent = "0";
    ticks.children[1].textContent = shared ? fmt(real / 2) : "";
    ticks.children[2].textContent = shared ? fmt(real) : H.text.each_max;
    scaleButton.textContent = shared ? H.text.to_each : H.text.to_shared;
    root.dataset.shared = shared ? "1" : "0";
    const ms = performance.now() - t0;
    root.dataset.paintMs = ms.toFixed(3);
    root.dataset.paints = String(Number(root.dataset.paints || 0) + 1);
  }

  // the maps' words for the hovered patch, as lens/describe.py writes a picture's: each map's
  // three strongest patches with their weights and its weight on the patch itself, at most
  // `d.shown` maps (the rest counted); the picker alone: the patch
  const D_TEXT = H.text.describe || null;
  const TOP = 3;
  const weightAt = (p, j) => f16[H.maps[row(p, hover) + j]] / H.scale;
  // panel p's k strongest patches for the hovered patch, strongest first (the lower patch
  // first among equals, as lens/describe.py's `largest`)
  function strongest(p, k) {
    const o = row(p, hover), best = [];
    for (let j = 0; j < N; j++) {
      const v = f16[H.maps[o + j]];
      if (best.length === k && v <= f16[H.maps[o + best[k - 1]]]) continue;
      let at = best.length;
      while (at > 0 && v > f16[H.maps[o + best[at - 1]]]) at--;
      best.splice(at, 0, j);
      if (best.length > k) best.pop();
    }
    return best;
  }
  const panelName = (p) => {
    const P = panels[p];
    return H.row_labels.length ? `${H.row_labels[P.r]} · ${H.col_labels[P.c]}` : H.titles[P.c];
  };
  const patchValue = (d, p, j) => d.patch.replace("{i}", String(j))
    .replace("{v}", fmt(weightAt(p, j)));
  function describeMaps() {
    const d = D_TEXT;
    if (!d || SIM || !H.rows) { desc.textContent = patchText(hover); return; }
    const said = [d.sentence.replace("{s}", H.text.title.replace("{i}", String(hover)))];
    const shown = Math.min(panels.length, d.shown);
    for (let p = 0; p < shown; p++) {
      const top = strongest(p, TOP).map((j) => patchValue(d, p, j)).join(d.items);
      said.push(d.sentence.replace("{s}", d.panel.replace("{a}", panelName(p))
        .replace("{b}", top) + d.own.replace("{o}", fmt(weightAt(p, hover)))));
    }
    if (panels.length > shown) said.push(d.more.replace("{n}", String(panels.length - shown)));
    desc.textContent = said.join(d.sentences);
  }

  // the maps as a table, on demand (a disclosure button after the maps): a row per map with
  // its three strongest patches and their weights and its weight on the hovered patch itself
  // (the numbers the description says, every map's), rebuilt as the query moves while open
  const T_TEXT = D_TEXT && D_TEXT.show && H.rows && !SIM ? D_TEXT : null;
  let table = null, tableButton = null, tableCaption = null, tableBody = null;
  if (T_TEXT) {
    const box = el("div", "el-tablebox", root);
    tableButton = el("button", "el-tablebutton", box);
    tableButton.type = "button";
    tableButton.dataset.testid = "el-table-button";
    table = el("table", "el-table", box);
    TABLES += 1;
    table.id = `el-table-${TABLES}`;
    table.dataset.testid = "el-table";
    tableButton.setAttribute("aria-controls", table.id);
    tableCaption = el("caption", "", table);
    const head = el("tr", "", el("thead", "", table));
    for (const h of [T_TEXT.map, ...T_TEXT.top, T_TEXT.own_col]) {
      const th = el("th", "", head);
      th.scope = "col";
      th.textContent = h;
    }
    tableBody = el("tbody", "", table);
    tableButton.addEventListener("click", () => setTable(table.hidden));
  }
  function fillTable() {
    if (!table || table.hidden) return;
    const d = T_TEXT;
    tableCaption.textContent = d.caption.replace("{t}",
      H.text.title.replace("{i}", String(hover)));
    const rows = [];
    for (let p = 0; p < panels.length; p++) {
      const tr = document.createElement("tr");
      const th = el("th", "", tr);
      th.scope = "row";
      th.textContent = panelName(p);
      for (const j of strongest(p, TOP)) el("td", "", tr).textContent = patchValue(d, p, j);
      el("td", "", tr).textContent = fmt(weightAt(p, hover));
      rows.push(tr);
    }
    tableBody.replaceChildren(...rows);
  }
  function setTable(open) {
    if (!table) return;
    table.hidden = !open;
    tableButton.textContent = open ? T_TEXT.hide : T_TEXT.show;
    tableButton.setAttribute("aria-expanded", open ? "true" : "false");
    root.dataset.table = open ? "1" : "0";
    if (open) openTables().add(tableKey); else openTables().delete(tableKey);
    fillTable();
  }

  function paint() {
    drawPicker();
    drawZoom();
    drawMaps();
    describeMaps();
    fillTable();
    root.dataset.hover = String(hover);
  }

  // --- pointer: hover shows, a click or tap commits ----------------------------------------
  const patchAt = (cv, ev) => {
    const r = cv.getBoundingClientRect();  // the displayed size, whatever the canvas's pixels
    const c = Math.min(G - 1, Math.max(0, Math.floor((ev.clientX - r.left) / r.width * G)));
    const rr = Math.min(G - 1, Math.max(0, Math.floor((ev.clientY - r.top) / r.height * G)));
    return rr * G + c;
  };
  const showTip = (ev, text) => {
    const r = root.getBoundingClientRect();
    tip.textContent = text;
    tip.style.display = "block";
    const x = ev.clientX - r.left + 12, w = tip.offsetWidth;
    tip.style.left = Math.max(0, Math.min(x, r.width - w)) + "px";
    tip.style.top = (ev.clientY - r.top + 14) + "px";
  };
  const hideTip = () => { tip.style.display = "none"; };
  const patchText = (i, words = H.text.patch) => words.replace("{i}", String(i))
    .replace("{r}", String(Math.floor(i / G))).replace("{c}", String(i % G));
  const setHover = (i) => { if (i !== hover) { hover = i; paint(); } };
  // the maps are out of view when less than half of the first one is in the window
  const mapsHidden = () => {
    if (!panels.length) return false;
    const r = panels[0].cv.getBoundingClientRect(), vv = window.visualViewport;
    const top = vv ? vv.offsetTop : 0, bottom = top + (vv ? vv.height : window.innerHeight);
    return Math.min(r.bottom, bottom) - Math.max(r.top, top) < r.height / 2;
  };
  const showBelow = (on) => {
    if (!below) return;
    below.hidden = !on;
    root.dataset.below = on ? "1" : "0";  // kept on the root: the rerun after a commit redraws
  };
  const commit = (i) => {
    query = i; hover = i; paint();
    showBelow(mapsHidden());
    // the picker alone (a lesson's task): the live region says the patch is the choice now
    if (!H.rows && H.text.chosen) desc.textContent = patchText(i, H.text.chosen);
    root.dataset.committed = String(i);
    nonce += 1;
    setStateValue("commit", { query: i, nonce: `${Date.now()}-${nonce}` });
  };
  let down = null, justZoomed = false;
  pc.addEventListener("pointermove", (ev) => {
    const i = patchAt(pc, ev);
    setHover(i);
    showTip(ev, patchText(i));
  });
  pc.addEventListener("pointerleave", () => { hideTip(); setHover(query); });
  pc.addEventListener("pointerdown", (ev) => {
    down = { x: ev.clientX, y: ev.clientY };
    setHover(patchAt(pc, ev));
    showTip(ev, patchText(hover));
  });
  pc.addEventListener("pointerup", (ev) => {
    if (!down) return;
    const i = patchAt(pc, ev);
    down = null;
    if (ev.pointerType !== "mouse") hideTip();
    const small = pc.getBoundingClientRect().width / G < FINGER_PX;
    if (zoom && ev.pointerType !== "mouse" && small) {
      setHover(i);
      openZoom(i);  // a finger covers several patches: choose in the zoom
      justZoomed = true;  // the tap's own click would land on the zoom: cancelled below
      return;
    }
    closeZoom();
    commit(i);
  });
  // touchend comes after pointerup: cancelling it cancels the click the browser would send
  pc.addEventListener("touchend", (ev) => {
    if (justZoomed) ev.preventDefault();
    justZoomed = false;
  }, { passive: false });
  if (zoom) {
    zc.addEventListener("click", (ev) => {
      const r = zc.getBoundingClientRect();
      const c = Math.min(ZOOM - 1, Math.floor((ev.clientX - r.left) / r.width * ZOOM));
      const rr = Math.min(ZOOM - 1, Math.floor((ev.clientY - r.top) / r.height * ZOOM));
      const i = zoomAt + rr * G + c;
      closeZoom();
      commit(i);
    });
  }
  pc.addEventListener("pointercancel", () => { down = null; hideTip(); setHover(query); });
  pc.addEventListener("keydown", (ev) => {
    const step = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    const s = step[ev.key];
    if (!s) return;
    ev.preventDefault();
    const r = Math.min(G - 1, Math.max(0, Math.floor(hover / G) + s[0]));
    const c = Math.min(G - 1, Math.max(0, (hover % G) + s[1]));
    query = r * G + c; hover = query; paint();
    showBelow(mapsHidden());
    root.dataset.committed = String(query);
    clearTimeout(keyTimer);  // a run of presses commits once, where it stops
    keyTimer = setTimeout(() => commit(query), 350);
  });
  const weightTip = (ev, cv, p) => {
    const P = panels[p], j = patchAt(cv, ev);
    if (SIM) {  // `cur` holds the hovered patch's cosines (drawn last)
      const w = fmt(cur[j]);
      showTip(ev, `${patchText(j)} · ${H.text.weight} ${w}`);
      root.dataset.tip = w;
      return;
    }
    const bits = H.maps[row(p, hover) + j];
    // below float16's normal range the digits are not the trace's: say only how small
    const value = (b) => b & 0x7c00 ? fmt(f16[b] / H.scale) : "< " + fmt(2 ** -14 / H.scale);
    const w = value(bits);
    const who = H.row_labels.length ? `${H.row_labels[P.r]}, ${H.col_labels[P.c]}`
      : H.titles[P.c];
    let text = `${who} · ${patchText(j)} · ${H.text.weight} ${w}`;
    if (H.prefix) {  // what the map leaves out: this row's weight on CLS (and the others)
      const s = value(H.prefix[p * N + hover]);
      text += ` · ${H.text.prefix.replace("{s}", s)}`;
      root.dataset.prefix = s;
    }
    showTip(ev, text);
    root.dataset.tip = w;
  };
  const showBig = (p) => {  // -1 closes the large view
    bigPanel = p;
    big.box.style.display = p >= 0 ? "block" : "none";
    root.dataset.big = String(p);
    drawMaps();
    if (p >= 0) big.box.scrollIntoView({ block: "nearest" });
  };
  for (const P of panels) {
    const p = Number(P.cv.dataset.panel);
    const onMove = (ev) => weightTip(ev, P.cv, p);
    P.cv.addEventListener("pointermove", onMove);
    P.cv.addEventListener("pointerdown", onMove);
    P.cv.addEventListener("pointerleave", hideTip);
    if (!SIM) P.cv.addEventListener("click", () => showBig(bigPanel === p ? -1 : p));
  }
  if (big) {
    big.cv.addEventListener("pointermove", (ev) => weightTip(ev, big.cv, bigPanel));
    big.cv.addEventListener("pointerdown", (ev) => weightTip(ev, big.cv, bigPanel));
    big.cv.addEventListener("pointerleave", hideTip);
    big.cv.addEventListener("click", () => { hideTip(); showBig(-1); });
  }
  let seen = null;
  if (below) {
    below.addEventListener("click", () => {
      showBelow(false);
      // a glide, unless the learner's system asks for less motion (WCAG 2.3.3)
      const still = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
      panels[0].cv.closest(".el-maps").scrollIntoView({ behavior: still ? "auto" : "smooth",
        block: "start" });
    });
    // the maps came into view (scrolled to, by the button or by the learner): the sign goes
    seen = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.intersectionRatio >= 0.5)) showBelow(false);
    }, { threshold: [0, 0.5, 1] });
    seen.observe(panels[0].cv);
  }
  setTable(wasTable);
  paint();
  showBelow(root.dataset.below === "1" && mapsHidden());  // still to be seen after the rerun
  if (zoom && wasZoom >= 0 && wasZoom < N) {  // a rerun redraws: the zoom stays open
    zoomAt = wasZoom;
    zoom.hidden = false;
    drawZoom();
  } else {
    root.dataset.zoom = "-1";
  }
  if (hadFocus) pc.focus({ preventScroll: true });  // the arrow keys go on moving the query
  return () => {
    clearTimeout(keyTimer);
    if (seen) seen.disconnect();
    if (root._cleanup) root._cleanup();
  };
}
