// The report's figures, drawn by the page from their embedded data (rageval.report.page_figures): plain SVG,
// vanilla JS, no library, no request. Every text is set with textContent (never parsed as markup).
// A point shows its numbers on hover or focus; a click (or Enter) lists its setting's records in the explorer.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  var node = document.getElementById("figure-data");
  if (!node) return;
  var figs = JSON.parse(node.textContent);
  var tip = document.getElementById("pf-tip");

  function svg(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, attrs) {
    var t = svg("text", attrs || {}, parent);
    t.setAttribute("x", x);
    t.setAttribute("y", y);
    t.textContent = s;
    return t;
  }
  function fmt(v) { return v === null || v === undefined ? "undefined" : v.toFixed(3); }
  function ci(lo, hi) { return lo === null || hi === null || lo === undefined ? "" : " [" + fmt(lo) + ", " + fmt(hi) + "]"; }

  // the extent of the points and their intervals, padded by 10% (a single value: +-0.05)
  function extent(points, lo, v, hi) {
    var a = Infinity, b = -Infinity;
    points.forEach(function (p) {
      [p[lo], p[v], p[hi]].forEach(function (x) { if (x !== null && x !== undefined) { a = Math.min(a, x); b = Math.max(b, x); } });
    });
    if (!isFinite(a)) return [0, 1];
    var pad = b > a ? (b - a) * 0.1 : Math.max(Math.abs(a) * 0.1, 0.05);
    return [a - pad, b + pad];
  }
  function ticks(a, b) {  // about five round ticks between a and b
    var span = b - a, step = Math.pow(10, Math.floor(Math.log10(span / 5)));
    var r = span / 5 / step;
    step *= r >= 5 ? 5 : r >= 2 ? 2 : r >= 1 ? 1 : 1;
    var out = [], t = Math.ceil(a / step) * step;
    for (; t <= b + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
    return out;
  }
  function logTicks(a, b) {  // 1, 2 and 5 times the powers of ten between a and b
    var out = [];
    for (var d = Math.floor(Math.log10(a)); d <= Math.ceil(Math.log10(b)); d++) {
      [1, 2, 5].forEach(function (m) { var v = m * Math.pow(10, d); if (v >= a && v <= b) out.push(v); });
    }
    return out;
  }
  function tickText(t) {
    var s = Math.abs(t) >= 1000 || (Math.abs(t) < 0.001 && t !== 0) ? t.toExponential(0) : String(parseFloat(t.toPrecision(6)));
    return s;
  }
  function scale(dom, r0, r1, log) {
    if (log) {
      var l0 = Math.log10(dom[0]), l1 = Math.log10(dom[1]);
      return function (v) { return r0 + (Math.log10(v) - l0) / (l1 - l0) * (r1 - r0); };
    }
    return function (v) { return r0 + (v - dom[0]) / (dom[1] - dom[0]) * (r1 - r0); };
  }

  function show(ev, f, panel, p) {
    var lines = [p.s, (panel.title || panel.key) + ": " + fmt(p.y) + ci(p.ylo, p.yhi), f.x.key + ": " + fmt(p.x) + ci(p.xlo, p.xhi),
                 "n = " + (p.n === null || p.n === undefined ? "undefined" : p.n), "click: list its records"];
    tip.textContent = "";
    lines.forEach(function (l, i) {
      var d = document.createElement("div");
      if (i === 0) d.className = "pf-tip-head";
      d.textContent = l;
      tip.appendChild(d);
    });
    tip.hidden = false;
    var box = ev.target.getBoundingClientRect();
    tip.style.left = Math.min(window.innerWidth - 260, box.right + 8) + window.scrollX + "px";
    tip.style.top = box.top + window.scrollY - 8 + "px";
  }
  function hide() { tip.hidden = true; }

  // a click on a point: the explorer lists that setting's records (its other filters as they are)
  function filter(setting) {
    var sel = document.getElementById("ex-setting");
    if (!sel || !Array.prototype.some.call(sel.options, function (o) { return o.value === setting; })) return;
    sel.value = setting;
    sel.dispatchEvent(new Event("change"));
    var ex = document.getElementById("explorer");
    if (ex && ex.scrollIntoView) ex.scrollIntoView();
  }

  function draw(f, box) {
    var n = f.panels.length, PW = f.kind === "pareto" ? 520 : 360, PH = f.kind === "pareto" ? 330 : 270;
    var L = 58, R = f.legend.length ? 120 : 14, T = f.panels.some(function (p) { return p.title; }) ? 24 : 10, B = 44, GAP = 30;
    var W = L + n * PW + (n - 1) * GAP + R, H = T + PH + B;
    var root = svg("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "group", "class": "pf-svg",
                           "aria-labelledby": box.parentNode.id + "-title"}, null);
    svg("title", {}, root).textContent = document.getElementById(box.parentNode.id + "-title").textContent;
    var all = [];
    f.panels.forEach(function (panel) { panel.series.forEach(function (s) { all = all.concat(s.points); }); });
    var xd = extent(all, "xlo", "x", "xhi");
    if (f.x.log) {
      var xs = all.map(function (p) { return p.xlo !== null ? p.xlo : p.x; }).concat(all.map(function (p) { return p.xhi !== null ? p.xhi : p.x; }));
      xd = [Math.min.apply(null, xs) / 1.3, Math.max.apply(null, xs) * 1.3];
    }
    var yd = extent(all, "ylo", "y", "yhi");  // one y axis shared by the panels
    f.panels.forEach(function (panel, k) {
      var x0 = L + k * (PW + GAP), g = svg("g", {"class": "pf-panel"}, root);
      var X = scale(xd, x0, x0 + PW, f.x.log), Y = scale(yd, T + PH, T, false);
      svg("rect", {x: x0, y: T, width: PW, height: PH, "class": "pf-frame"}, g);
      var xt = f.x.log ? logTicks(xd[0], xd[1]) : ticks(xd[0], xd[1]);
      xt.forEach(function (t) {
        svg("line", {x1: X(t), x2: X(t), y1: T, y2: T + PH, "class": "pf-grid"}, g);
        text(g, X(t), T + PH + 14, tickText(t), {"text-anchor": "middle", "class": "pf-tick"});
      });
      ticks(yd[0], yd[1]).forEach(function (t) {
        svg("line", {x1: x0, x2: x0 + PW, y1: Y(t), y2: Y(t), "class": "pf-grid"}, g);
        if (k === 0) text(g, x0 - 5, Y(t) + 3, tickText(t), {"text-anchor": "end", "class": "pf-tick"});
      });
      text(g, x0 + PW / 2, H - 8, f.x.label, {"text-anchor": "middle", "class": "pf-label"});
      if (panel.title) text(g, x0 + PW / 2, T - 8, panel.title, {"text-anchor": "middle", "class": "pf-title"});
      if (k === 0 && f.y_label) text(g, 0, 0, f.y_label, {"text-anchor": "middle", "class": "pf-label", transform: "translate(14 " + (T + PH / 2) + ") rotate(-90)"});
      if (panel.frontier && panel.frontier.length > 1) {
        svg("polyline", {points: panel.frontier.map(function (q) { return X(q[0]) + "," + Y(q[1]); }).join(" "), "class": "pf-front"}, g);
      }
      panel.series.forEach(function (s) {
        var c = COLORS[s.c % COLORS.length];
        if (s.line && s.points.length > 1) {
          svg("polyline", {points: s.points.map(function (p) { return X(p.x) + "," + Y(p.y); }).join(" "), stroke: c, "class": "pf-line"}, g);
        }
        s.points.forEach(function (p) {
          if (p.ylo !== null && p.yhi !== null) svg("line", {x1: X(p.x), x2: X(p.x), y1: Y(p.ylo), y2: Y(p.yhi), stroke: c, "class": "pf-bar"}, g);
          if (p.xlo !== null && p.xhi !== null) svg("line", {x1: X(p.xlo), x2: X(p.xhi), y1: Y(p.y), y2: Y(p.y), stroke: c, "class": "pf-bar"}, g);
        });
        s.points.forEach(function (p) {
          var on = p.front === true;
          var dot = svg("circle", {cx: X(p.x), cy: Y(p.y), r: on ? 6 : 4, fill: c, tabindex: 0, role: "button",
                                   "class": "pf-pt" + (on ? " pf-on" : ""), "data-setting": p.s}, g);
          var label = p.s + ": " + (panel.title || panel.key) + " " + fmt(p.y) + ci(p.ylo, p.yhi) + ", " + f.x.key + " " + fmt(p.x) + ci(p.xlo, p.xhi) + ", n = " + p.n;
          dot.setAttribute("aria-label", label);
          svg("title", {}, dot).textContent = label;
          dot.addEventListener("mouseenter", function (ev) { show(ev, f, panel, p); });
          dot.addEventListener("focus", function (ev) { show(ev, f, panel, p); });
          dot.addEventListener("mouseleave", hide);
          dot.addEventListener("blur", hide);
          dot.addEventListener("click", function () { filter(p.s); });
          dot.addEventListener("keydown", function (ev) {
            if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); filter(p.s); }
          });
        });
      });
    });
    var lx = W - R + 10, ly = T + 6;
    f.legend.forEach(function (e, i) {
      var y = ly + i * 14;
      svg("rect", {x: lx, y: y - 7, width: 10, height: 8, fill: COLORS[e.c % COLORS.length]}, root);
      text(root, lx + 14, y, e.name, {"class": "pf-legend"});
    });
    if (f.kind === "pareto") {
      var y = ly + f.legend.length * 14;
      svg("line", {x1: lx, x2: lx + 10, y1: y - 3, y2: y - 3, "class": "pf-front"}, root);
      text(root, lx + 14, y, "frontier", {"class": "pf-legend"});
    }
    box.appendChild(root);
  }

  Array.prototype.forEach.call(document.querySelectorAll(".pf-plot[data-fig]"), function (box) {
    draw(figs[parseInt(box.dataset.fig, 10)], box);
  });
})();
