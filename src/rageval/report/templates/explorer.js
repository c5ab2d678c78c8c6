// The record explorer of report.html: filters over the embedded records, one record beside the baseline's.
// Vanilla JS, no request; every text is set with textContent (never parsed as HTML).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("explorer-data").textContent);
  var recs = data.records, Q = data.questions, MAX_ROWS = 500;
  var byKey = {};
  recs.forEach(function (r, i) { byKey[r.s + "\u0000" + r.q] = i; });
  var ref = data.reference || data.settings[0];
  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function fmt(v) { return v === null || v === undefined ? "undefined" : v.toFixed(3); }
  function matches(r, f) {
    if (f.setting && r.s !== f.setting) return false;
    if (f.status && r.st !== f.status) return false;
    if (f.q) {
      var qt = (Q[r.q] && Q[r.q].text) || "";
      if (r.q.toLowerCase().indexOf(f.q) < 0 && qt.toLowerCase().indexOf(f.q) < 0) return false;
    }
    if (f.metric) {
      if (!(f.metric in r.m)) return false;
      var v = r.m[f.metric];
      if (f.undef) return v === null;
      if (v === null) return !(f.min !== null || f.max !== null);
      if (f.min !== null && v < f.min) return false;
      if (f.max !== null && v > f.max) return false;
    }
    return true;
  }
  function num(id) { var v = $(id).value; return v === "" ? null : parseFloat(v); }
  function filters() {
    return {setting: $("ex-setting").value, status: $("ex-status").value, q: $("ex-question").value.trim().toLowerCase(),
            metric: $("ex-metric").value, min: num("ex-min"), max: num("ex-max"), undef: $("ex-undef").checked};
  }
  function refresh() {
    var f = filters(), body = $("explorer-table").tBodies[0], n = 0;
    body.textContent = "";
    $("ex-metric-head").textContent = f.metric || "metric";
    recs.forEach(function (r, i) {
      if (!matches(r, f)) return;
      n += 1;
      if (n > MAX_ROWS) return;
      var tr = el("tr");
      tr.tabIndex = 0;
      tr.dataset.index = i;
      // the question's text where the records carry it (its id on hover), else its id
      var qt = (Q[r.q] && Q[r.q].text) || "";
      var qc = el("td", qt ? "qtext" : null, qt ? (qt.length > 90 ? qt.slice(0, 89) + "\u2026" : qt) : r.q);
      if (qt) qc.title = r.q;
      tr.appendChild(qc);
      tr.appendChild(el("td", null, r.s));
      tr.appendChild(el("td", null, r.st));
      tr.appendChild(el("td", f.metric && r.m[f.metric] === null ? "undef" : null, f.metric ? fmt(r.m[f.metric]) : ""));
      body.appendChild(tr);
    });
    $("explorer-matches").textContent = n + " of " + recs.length + " records match" + (n > MAX_ROWS ? " (first " + MAX_ROWS + " listed)" : "") + ".";
  }
  function unitText(u, q) {
    if (u[0] !== null) return u[0];
    return (u[1] || []).map(function (id) { return (q.sources || {})[id] || ""; }).join(" ");
  }
  function pane(r) {
    var q = Q[r.q] || {}, p = el("div", "pane");
    p.appendChild(el("h4", null, r.s + " · " + r.q + " · " + r.st));
    if (r.e) p.appendChild(el("p", "undef", r.e));
    p.appendChild(el("h5", null, "question"));
    p.appendChild(el("p", null, q.text || "(the records carry the question id only)"));
    p.appendChild(el("h5", null, "gold answers"));
    p.appendChild(el("p", null, (q.gold || []).join("; ") || "(none)"));
    p.appendChild(el("h5", null, "answer"));
    var ans = el("ol");
    r.a.forEach(function (s) {
      var li = el("li", null, s.t + " ");
      s.c.forEach(function (c, k) { li.appendChild(el("span", "cite " + ((s.cd || [])[k] || s.d), "[" + c + "]")); });
      var modes = Object.keys(s.v).sort().map(function (k) { return k + ": " + s.v[k]; });
      if (s.ev.length) modes.unshift("evidence: " + s.ev.join(", "));
      if (modes.length) li.appendChild(el("div", "prov", modes.join(" · ")));
      ans.appendChild(li);
    });
    if (!r.a.length) ans.appendChild(el("li", "note", "(no sentence)"));
    p.appendChild(ans);
    p.appendChild(el("h5", null, "context units"));
    var units = el("ol");
    r.u.forEach(function (u, j) {
      var li = el("li", null, unitText(u, q));
      var prov = u[1] ? "declared: " + u[1].join(", ") : "no provenance";
      var rec = r.r[String(j + 1)];
      if (rec) prov += " · recovered: " + (rec.length ? rec.join(", ") : "none");
      li.appendChild(el("div", "prov", prov));
      if (rec && rec.length) rec.forEach(function (id) { li.appendChild(el("div", "prov", id + ": " + ((q.sources || {})[id] || ""))); });
      units.appendChild(li);
    });
    p.appendChild(units);
    var ms = Object.keys(r.m).sort().map(function (k) { return k + " " + fmt(r.m[k]); });
    p.appendChild(el("h5", null, "metrics"));
    p.appendChild(el("p", "metrics-line", ms.join(" · ")));
    return p;
  }
  function open(i) {
    var r = recs[i], box = $("explorer-record");
    box.textContent = "";
    box.appendChild(pane(r));
    var j = byKey[ref + "\u0000" + r.q];
    var two = r.s !== ref && j !== undefined;
    if (two) box.appendChild(pane(recs[j]));
    box.className = "record" + (two ? "" : " single");
    Array.prototype.forEach.call(document.querySelectorAll("#explorer-table tr.selected"), function (t) { t.classList.remove("selected"); });
    var row = document.querySelector('#explorer-table tr[data-index="' + i + '"]');
    if (row) row.classList.add("selected");
  }
  $("explorer-table").addEventListener("click", function (ev) {
    var tr = ev.target.closest("tr[data-index]");
    if (tr) open(parseInt(tr.dataset.index, 10));
  });
  $("explorer-table").addEventListener("keydown", function (ev) {
    var tr = ev.target.closest("tr[data-index]");
    if (!tr) return;
    if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); open(parseInt(tr.dataset.index, 10)); }
    if (ev.key === "ArrowDown" && tr.nextElementSibling) { ev.preventDefault(); tr.nextElementSibling.focus(); }
    if (ev.key === "ArrowUp" && tr.previousElementSibling) { ev.preventDefault(); tr.previousElementSibling.focus(); }
  });
  ["ex-setting", "ex-status", "ex-metric", "ex-undef"].forEach(function (id) { $(id).addEventListener("change", refresh); });
  ["ex-question", "ex-min", "ex-max"].forEach(function (id) { $(id).addEventListener("input", refresh); });
  refresh();
})();
