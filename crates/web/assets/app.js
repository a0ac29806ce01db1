// fabriclab serve: the pages' script. Forms are built from /api/forms (the CLI's flags:
// names, units, defaults, help); every answer comes from the API, which answers with the
// CLI's --json. Nothing here computes physics.
"use strict";
const fabriclab = (() => {
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
  const fmt = (x, d = 1) => (typeof x === "number" ? x.toLocaleString("en-US", { maximumFractionDigits: d }) : esc(x));
  const us = (ps) => fmt(ps / 1e6, 3) + " µs";
  const kib = (b) => fmt(b, 0) + " B (" + fmt(b / 1024, 1) + " KiB)";

  async function post(path, body) {
    const r = await fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const text = await r.text();
    let json = null;
    try { json = JSON.parse(text); } catch (_) { /* not JSON (a scenario) */ }
    return { ok: r.ok, status: r.status, text, json };
  }

  // The form of `planner` from /api/forms, with `initial` values; calls `changed` on input.
  async function buildForm(planner, initial, changed, main) {
    const forms = await (await fetch("/api/forms")).json();
    const form = $("form");
    const more = document.createElement("details");
    more.className = "more";
    more.innerHTML = "<summary>More inputs</summary>";
    for (const f of forms[planner]) {
      const div = document.createElement("div");
      div.className = "field";
      div.id = "field-" + f.name;
      const unit = [f.value, f.default !== null ? "default " + f.default : "", f.required ? "required" : ""].filter(Boolean).join(" · ");
      const input = f.switch
        ? `<input type="checkbox" id="in-${f.name}" data-name="${f.name}" data-switch="1"${initial[f.name] ? " checked" : ""}>`
        : `<input type="text" id="in-${f.name}" data-name="${f.name}" value="${esc(initial[f.name] ?? "")}" placeholder="${esc(f.default ?? "")}">`;
      div.innerHTML = `<label for="in-${f.name}" title="${esc(f.long_help)}">${esc(f.name)}</label>${input}<span class="unit" title="${esc(f.long_help)}">${esc(f.help)}${unit ? " — " + esc(unit) : ""}</span><span class="err" id="err-${f.name}"></span>`;
      (f.name in initial || main.includes(f.name) || f.required ? form : more).appendChild(div);
    }
    form.appendChild(more);
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
    form.addEventListener("submit", (e) => e.preventDefault());
  }

  function inputs() {
    const o = {};
    for (const el of document.querySelectorAll("[data-name]")) {
      if (el.dataset.switch) { if (el.checked) o[el.dataset.name] = true; }
      else if (el.value.trim() !== "") o[el.dataset.name] = el.value.trim();
    }
    return o;
  }

  // Shows an error at the field its message names (`--flag`), else above the answer.
  function showError(msg) {
    for (const el of document.querySelectorAll(".field.bad")) el.classList.remove("bad");
    for (const el of document.querySelectorAll(".field .err")) el.textContent = "";
    if (!msg) return false;
    const m = /--([a-z0-9-]+)/.exec(msg);
    const field = m && $("field-" + m[1]);
    if (field) {
      field.classList.add("bad");
      $("err-" + m[1]).textContent = msg;
      if (field.parentElement.tagName === "DETAILS") field.parentElement.open = true;
    }
    return true;
  }

  // Re-asks `path` on every change (the last answer wins), rendering with `render`.
  function live(path, render) {
    let seq = 0;
    return async () => {
      const mine = ++seq;
      const r = await post(path, inputs());
      if (mine !== seq) return;
      if (r.ok) { showError(null); render(r.json); }
      else {
        const msg = r.json ? r.json.error : r.text;
        showError(msg);
        $("out").innerHTML = `<p class="error" id="answer-error">${esc(msg)}</p>`;
      }
    };
  }

  const table = (head, rows) => `<table><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr>${rows.map((r) => `<tr>${r.map((c) => (typeof c === "number" ? `<td class="num">${fmt(c, 3)}</td>` : `<td>${c}</td>`)).join("")}</tr>`).join("")}</table>`;

  // ---- RoCE lossless planner ----
  function renderRoce(v) {
    const p = v.plan;
    let h = `<h2>Headroom per port type <span class="src">(${esc(p.model_source)})</span></h2>`;
    h += table(["tier", "speed Gb/s", "cable m", "headroom B", "cells", "XOFF trigger", "XON offset B"], p.tiers.map((t) => [
      esc(t.tier), t.speed_gbps, t.cable_m, `<span class="num" id="headroom-${esc(t.tier)}">${t.headroom_bytes}</span>`, t.headroom_cells, esc(t.trigger ?? t.xoff_trigger_bytes ?? ""), t.xon_offset_bytes ?? ""]));
    for (const t of p.tiers) {
      if (!t.terms) continue;
      h += `<details><summary>${esc(t.tier)}: the derivation, term by term</summary>` +
        table(["term", "time", "bytes", "source"], t.terms.map((x) => [esc(x.name), us(x.time_ps), x.bytes, `<span class="src">${esc(x.source)}</span>`])) + "</details>";
    }
    h += "<h2>Buffer budget</h2>" + table(["switch", "count", "total B", "headroom B", "share", "shared B"], p.budgets.map((b) => [esc(b.role), b.switches, b.total_bytes, b.headroom_bytes, fmt(100 * b.headroom_share, 2) + " %", b.shared_bytes]));
    if (p.ecn) h += `<h2>ECN</h2><p>Kmin ${kib(p.ecn.kmin_bytes)}, Kmax ${kib(p.ecn.kmax_bytes)}; PFC fires at an egress queue of ${kib(p.ecn.pfc_queue_bytes)}.</p><p class="src">${esc(p.ecn.pfc_queue_derivation ?? "")}</p>`;
    if (p.dcqcn) h += `<h2>DCQCN</h2><details><summary>parameters</summary>${table(["parameter", "value"], Object.entries(p.dcqcn.params ?? {}).map(([k, x]) => [esc(k), esc(JSON.stringify(x))]))}</details>`;
    h += "<h2>Risks</h2><ul>" + p.risks.map((r) => `<li class="risk ${r.fired ? "fired" : "quiet"}"><b>${r.fired ? "⚠" : "✓"} ${esc(r.title)}</b> — ${esc(r.detail)}</li>`).join("") + "</ul>";
    $("out").innerHTML = h;
  }

  const ROCE_START = { mtu: "4096B", incast: "8", leaves: "4", spines: "2", "hosts-per-leaf": "8", "host-leaf-speed": "100Gbps", "host-leaf-cable": "3m", "leaf-spine-speed": "100Gbps", "leaf-spine-cable": "100m", "buffer-total": "16MiB", cell: "256B" };

  async function roce() {
    const update = live("/api/plan/roce", renderRoce);
    await buildForm("roce", ROCE_START, update, ["model", "asic"]);
    update();
    $("prove").addEventListener("click", async () => {
      const r = await post("/api/jobs", { kind: "prove-roce", inputs: inputs() });
      if (!r.ok) { $("prove-state").textContent = r.json ? r.json.error : r.text; return; }
      follow(r.json.id, $("prove-state"), null, (done) => {
        if (done.state !== "done") { $("prove-state").textContent = done.state + (done.error ? ": " + done.error : ""); return; }
        fetch(`/api/jobs/${done.id}/result.json`).then((x) => x.json()).then((v) => {
          const rows = (v.prove || []).map((t) => [esc(t.tier), t.at_plan.headroom_cells, t.at_plan.peak_headroom_cells, t.at_plan.lossless_drops,
            t.one_mtu_short ? t.one_mtu_short.lossless_drops : "-", t.margin_cells ?? "-"]);
          $("prove-state").innerHTML = "<h2>Simulated (--prove)</h2>" + table(["tier", "planned headroom cells", "simulated peak cells", "lossless drops at the plan", "drops one MTU short", "margin cells"], rows);
        });
      });
    });
  }

  // ---- Fabric designer ----
  function clos(d) {
    // Tiers bottom-up: nodes, then each switch tier; a line per link layer with its count.
    const W = 640, rowH = 90, tiers = [{ name: "nodes", count: d.nodes }].concat(d.switch_tiers.map((t) => ({ name: t.name, count: t.switches })));
    const H = rowH * tiers.length + 20;
    let s = `<svg id="clos" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">`;
    const y = (i) => H - 30 - i * rowH;
    tiers.forEach((t, i) => {
      const n = Math.min(t.count, 16);
      for (let k = 0; k < n; k++) {
        const x = 40 + (k + 0.5) * (W - 200) / n;
        s += `<rect x="${x - 10}" y="${y(i) - 8}" width="20" height="16" fill="${i ? "#0b5cad" : "#8aa4bf"}"/>`;
        if (i > 0) {
          const m = Math.min(tiers[i - 1].count, 16);
          for (let j = 0; j < m; j += Math.max(1, Math.floor(m / 4))) {
            const x2 = 40 + (j + 0.5) * (W - 200) / m;
            s += `<line x1="${x}" y1="${y(i) + 8}" x2="${x2}" y2="${y(i - 1) - 8}" stroke="#9db3c8" stroke-width="0.6"/>`;
          }
        }
      }
      s += `<text x="${W - 150}" y="${y(i) + 4}">${esc(t.name)}: ${fmt(t.count, 0)}${t.count > 16 ? " (16 drawn)" : ""}</text>`;
    });
    d.link_layers.forEach((l, i) => { s += `<text class="links" x="${W - 150}" y="${y(i) - rowH / 2 + 4}" fill="#0b5cad">${esc(l.name)}: ${fmt(l.links, 0)} links</text>`; });
    return s + "</svg>";
  }

  function renderDesign(d) {
    let h = `<h2>${fmt(d.endpoints, 0)} endpoints on ${fmt(d.nodes, 0)} nodes, ${d.tiers} switch tiers</h2><p>${esc(d.choice)}</p>` + clos(d);
    h += "<h2>Tiers</h2>" + table(["tier", "switches", "ports down", "ports up", "ports used", "free", "transceivers"], d.switch_tiers.map((t) => [esc(t.name), t.switches, t.ports_down, t.ports_up, t.ports_used, t.ports_free, t.transceivers]));
    h += "<h2>Links</h2>" + table(["layer", "links", "cables", "per pair"], d.link_layers.map((l) => [esc(l.name), l.links, l.cables, l.links_per_pair]));
    h += "<h2>Totals</h2>" + table(["switches", "links", "cables", "transceivers"], [[d.totals.switches, d.totals.links, d.totals.cables, d.totals.transceivers]]);
    h += `<h2>Bisection</h2><p>${fmt(d.bisection.gbps, 0)} Gb/s, oversubscription ${d.bisection.oversubscription}:1</p><p class="src">${esc(d.bisection.convention)}</p>`;
    h += "<details id=\"explain\"><summary>Formulas and sources (--explain)</summary><ul>" + d.formulas.map((f) => `<li><b>${esc(f.quantity)}</b>: ${esc(f.formula)} <span class="src">${esc(f.source)}</span></li>`).join("") + "</ul></details>";
    $("out").innerHTML = h;
  }

  async function design() {
    const update = live("/api/design", renderDesign);
    await buildForm("design", { superpod: "h100", sus: "4" }, update, ["gpus", "nodes", "nics-per-node", "speed", "radix", "oversubscription", "rail-optimised"]);
    update();
    const scenario = async () => {
      const r = await post("/api/design/scenario", inputs());
      if (!r.ok) { showError(r.json ? r.json.error : r.text); return null; }
      return r.text;
    };
    $("download").addEventListener("click", async () => {
      const t = await scenario();
      if (t === null) return;
      const a = document.createElement("a");
      a.href = URL.createObjectURL(new Blob([t], { type: "application/toml" }));
      a.download = "design.toml";
      a.click();
    });
    $("compare").addEventListener("click", async () => {
      const t = await scenario();
      if (t === null) return;
      sessionStorage.setItem("fabriclab-scenario", t);
      location.href = "/scenario";
    });
  }

  // ---- Microburst planner ----
  function occupancy(p, sim) {
    // The analytical queue (frame bytes) over time: it rises while the senders send, up to
    // the limit; then drains at the egress rate. Lossless: the pause band is shaded.
    const W = 640, H = 240, L = 60, B = 30;
    const b = p.beyond;
    const peak = b.class === "absorbed" ? p.peak_frame_bytes : p.limit_frame_bytes;
    const tPeak = b.class === "lossless" ? b.senders_finish_ps : p.senders_done_ps;
    const tEnd = p.last_byte_out_ps;
    const pts = b.class === "absorbed" ? [[0, 0], [p.senders_done_ps, peak], [tEnd, 0]]
      : b.class === "lossy" ? [[0, 0], [b.drops_start_ps, peak], [p.senders_done_ps, peak], [tEnd, 0]]
      : [[0, 0], [b.first_xoff_ps, peak], [tPeak, peak], [tEnd, 0]];
    const tMax = Math.max(tEnd, sim ? sim.last_flow_done_ps : 0), qMax = Math.max(peak, sim ? sim.peak_queue_frame_bytes : 0);
    const x = (t) => L + (W - L - 10) * t / Math.max(tMax, 1), y = (q) => H - B - (H - B - 10) * q / Math.max(qMax, 1);
    let s = `<svg id="occupancy" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}">`;
    if (b.class === "lossless") s += `<rect id="pause" x="${x(b.first_xoff_ps)}" y="10" width="${x(b.senders_finish_ps) - x(b.first_xoff_ps)}" height="${H - B - 10}" fill="#f6d7d4"/><text x="${x(b.first_xoff_ps) + 4}" y="24" fill="#b3261e">senders paused (PFC)</text>`;
    if (b.class === "lossy") s += `<text x="${x(b.drops_start_ps) + 4}" y="24" fill="#b3261e">drops (${fmt(b.dropped_packets, 0)} packets)</text>`;
    s += `<polyline fill="none" stroke="#0b5cad" stroke-width="2" points="${pts.map(([t, q]) => `${x(t)},${y(q)}`).join(" ")}"/>`;
    s += `<line x1="${L}" y1="${H - B}" x2="${W - 10}" y2="${H - B}" stroke="#333"/><line x1="${L}" y1="10" x2="${L}" y2="${H - B}" stroke="#333"/>`;
    s += `<text x="${L}" y="${H - 8}">0</text><text x="${W - 90}" y="${H - 8}">${us(tMax)}</text><text x="2" y="${y(peak) + 4}">${fmt(peak / 1024, 0)} KiB</text>`;
    if (sim) {
      // The simulation (--prove): its sampled egress queue on the same axes, the senders it
      // paused as a band along the bottom (height: the share of senders paused), its peak
      // and the time its last flow finished.
      const sp = sim.peak_queue_frame_bytes, st = sim.last_flow_done_ps, ser = sim.series || [];
      const n = Math.max(1, ...ser.map((p) => p.senders_paused));
      const band = (H - B - 10) / 6;
      const paused = ser.map((p) => `${x(p.t_ps)},${H - B - band * p.senders_paused / n}`).join(" ");
      if (ser.length) s += `<polyline id="simulated-pause" fill="none" stroke="#c45a00" stroke-width="1" stroke-dasharray="2 2" points="${x(0)},${H - B} ${paused}"/>`;
      s += `<polyline id="simulated" fill="none" stroke="#c45a00" stroke-width="2" points="${ser.map((p) => `${x(p.t_ps)},${y(p.queue_frame_bytes)}`).join(" ")}"/>`;
      s += `<circle cx="${x(st)}" cy="${H - B}" r="4" fill="#c45a00"/><text x="${W - 12}" y="${y(sp) + 30}" text-anchor="end" fill="#c45a00">simulated peak ${fmt(sp / 1024, 0)} KiB; last flow done ${us(st)}</text>`;
    }
    return s + `</svg><p class="muted">Egress queue (frame bytes) over time: analytical (plan::burst, blue)${sim ? "; simulated (--prove, orange), with the share of senders paused along the bottom (dotted). The simulated queue rises above the analytical limit by what lands in headroom after each XOFF, which the fluid model leaves out" : ""}.</p>`;
  }

  let burstSim = null;
  function renderBurst(v) {
    const p = v.plan, b = p.beyond;
    let h = occupancy(p, burstSim);
    h += table(["quantity", "value"], [
      ["peak occupancy", `${kib(p.peak_frame_bytes)} in frames, ${fmt(p.peak_cells, 0)} cells, at ${us(p.senders_done_ps)}`],
      ["drain after the peak", us(p.drain_after_peak_ps)],
      ["buffer limit", `${fmt(p.limit_cells, 0)} cells = ${kib(p.limit_frame_bytes)}`],
      ["largest burst absorbed", p.max_burst_bytes === null ? "any" : kib(p.max_burst_bytes) + " per sender"],
      ["beyond", b.class === "absorbed" ? "this burst fits: no drops, no pause" : b.class === "lossy" ? `drops start at ${us(b.drops_start_ps)}, ~${kib(b.dropped_bytes)}` : `first XOFF at ${us(b.first_xoff_ps)}, each sender paused ${us(b.paused_per_sender_ps)}, senders finish at ${us(b.senders_finish_ps)}`],
    ]);
    if (v.explain) h += "<details><summary>Formulas and sources</summary><ul>" + v.explain.map((l) => `<li>${esc(l)}</li>`).join("") + "</ul></details>";
    $("out").innerHTML = h;
  }

  async function burst() {
    const update = live("/api/burst", renderBurst);
    const changed = () => { burstSim = null; $("prove-state").textContent = ""; update(); };
    await buildForm("burst", { senders: "16", burst: "256KB", "in-speed": "100Gbps", "out-speed": "100Gbps", buffer: "2MiB", explain: true }, changed, ["class", "cell", "dynamic-th"]);
    update();
    $("prove").addEventListener("click", async () => {
      const r = await post("/api/jobs", { kind: "prove-burst", inputs: inputs() });
      if (!r.ok) { $("prove-state").textContent = r.json ? r.json.error : r.text; return; }
      follow(r.json.id, $("prove-state"), null, async (done) => {
        if (done.state !== "done") { $("prove-state").textContent = done.state + (done.error ? ": " + done.error : ""); return; }
        const v = await (await fetch(`/api/jobs/${done.id}/result.json`)).json();
        burstSim = v.simulated;
        $("prove-state").textContent = `simulated: ${fmt(v.simulated.drops, 0)} drops, ${fmt(v.simulated.pfc_frames, 0)} PFC frames, each sender paused ${us(v.simulated.paused_per_sender_ps)}`;
        update();
      });
    });
  }

  // ---- Jobs: progress, cancel, result ----
  function follow(id, state, bar, done) {
    const tick = async () => {
      const r = await fetch(`/api/jobs/${id}`);
      const j = await r.json();
      if (!r.ok) { state.textContent = j.error; return; }
      const sides = Object.values(j.progress || {});
      const f = sides.length ? sides.reduce((a, s) => a + s.fraction, 0) / sides.length : 0;
      if (bar) bar.style.width = (100 * (j.state === "done" ? 1 : f)).toFixed(1) + "%";
      const running = j.state === "running" && sides.length ? " — " + sides.map((s) => `${s.label}: ${s.message}`).join("; ") : "";
      state.textContent = j.state + (j.position ? ` (position ${j.position} in the queue)` : "") + running;
      if (["done", "failed", "cancelled"].includes(j.state)) done(j);
      else setTimeout(tick, 300);
    };
    tick();
  }

  async function scenario() {
    const examples = await (await fetch("/api/examples")).json();
    for (const e of examples) $("example").insertAdjacentHTML("beforeend", `<option value="${esc(e)}">${esc(e)}</option>`);
    const fromDesign = sessionStorage.getItem("fabriclab-scenario");
    if (fromDesign) { $("toml").value = fromDesign; $("name").value = "design.toml"; sessionStorage.removeItem("fabriclab-scenario"); }
    let shown = "";
    $("example").addEventListener("change", async () => {
      const name = $("example").value;
      $("name").value = name + ".toml";
      shown = name ? await (await fetch(`/api/examples/${encodeURIComponent(name)}`)).text() : "";
      $("toml").value = shown;
    });
    $("upload").addEventListener("change", async () => {
      const f = $("upload").files[0];
      if (f) { $("toml").value = await f.text(); $("example").value = ""; $("name").value = f.name.replace(/[^A-Za-z0-9._-]/g, "_"); }
    });
    // Edited text is an upload; the example's own text runs as the example (with its data files).
    $("toml").addEventListener("input", () => { if ($("toml").value !== shown) $("example").value = ""; });
    let current = null;
    const start = async (kind) => {
      $("error").textContent = ""; $("result").innerHTML = ""; $("downloads").innerHTML = "";
      const body = $("example").value ? { kind, example: $("example").value } : { kind, scenario: $("toml").value, name: $("name").value };
      const r = await post("/api/jobs", body);
      if (!r.ok) { $("error").textContent = r.json ? r.json.error : r.text; return; }
      current = r.json.id;
      $("cancel").disabled = false;
      follow(current, $("state"), $("bar"), (j) => {
        $("cancel").disabled = true;
        if (j.state === "failed") { $("error").textContent = j.error; markLine(j.error); return; }
        if (j.state !== "done") return;
        $("downloads").innerHTML = "Downloads: " + j.outputs.map((o) => `<a href="/api/jobs/${j.id}/${encodeURIComponent(o)}" download="${esc(o)}">${esc(o)}</a>`).join(" · ");
        $("result").innerHTML = `<iframe class="report" id="report" src="/api/jobs/${j.id}/report.html"></iframe>`;
      });
    };
    $("run").addEventListener("click", () => start("run"));
    $("compare").addEventListener("click", () => start("compare"));
    $("cancel").addEventListener("click", async () => { if (current) await fetch(`/api/jobs/${current}`, { method: "DELETE" }); });
  }

  // Selects the line a scenario error names (`file.toml:12: ...`) in the editor.
  function markLine(msg) {
    const m = /^[^:\n]+\.toml:(\d+)/.exec(msg || "");
    const ta = $("toml");
    if (!m || !ta.value) return;
    const lines = ta.value.split("\n"), n = Number(m[1]) - 1;
    const start = lines.slice(0, n).reduce((a, l) => a + l.length + 1, 0);
    ta.focus();
    ta.setSelectionRange(start, start + (lines[n] || "").length);
    $("error").dataset.line = String(n + 1);
  }

  return { roce, design, burst, scenario };
})();
