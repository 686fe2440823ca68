// The run page: logs paged and searched, code highlighted, AIDE's tree drawn as SVG.
(function () {
  "use strict";
  var root = document.getElementById("run-page");
  if (!root) return;
  var api = root.dataset.api, searchUrl = root.dataset.search;
  var SVGNS = "http://www.w3.org/2000/svg";

  function fileUrl(path) {
    return api + path.split("/").map(encodeURIComponent).join("/");
  }
  function getJson(url) {
    return fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" }).then(function (r) {
      if (!r.ok) return r.json().catch(function () { return {}; }).then(function (body) {
        throw new Error(body.detail || ("HTTP " + r.status));
      });
      return r.json();
    });
  }
  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  // ---- logs: 64 KB pages from a byte offset; search over the whole file server-side
  var logView = document.getElementById("log-view"), logMore = document.getElementById("log-more");
  var logName = document.getElementById("log-name"), logPos = document.getElementById("log-pos");
  var current = { path: null, next: null, start: 0 };
  function loadLog(path, offset, append) {
    return getJson(fileUrl(path) + "?offset=" + offset + "&length=65536").then(function (page) {
      if (!append) { logView.textContent = ""; current.start = page.offset; }
      logView.appendChild(document.createTextNode(page.text));
      current.path = path; current.next = page.next_offset;
      logName.textContent = path;
      var shownEnd = page.next_offset === null ? page.size : page.next_offset;
      logPos.textContent = "bytes " + current.start.toLocaleString() + "–" + shownEnd.toLocaleString() + " of " + page.size.toLocaleString();
      logMore.hidden = page.next_offset === null;
      logView.dataset.loaded = path;
    }).catch(function (e) { logView.textContent = "Cannot read " + path + ": " + e.message; });
  }
  root.addEventListener("click", function (ev) {
    var link = ev.target.closest("a.open-log");
    if (!link) return;
    ev.preventDefault();
    document.getElementById("log-hits").textContent = "";
    loadLog(link.dataset.path, 0, false);
    document.getElementById("log-view").scrollIntoView({ block: "nearest" });
  });
  if (logMore) logMore.addEventListener("click", function () {
    if (current.path && current.next !== null) loadLog(current.path, current.next, true);
  });
  var firstLog = document.querySelector("#log-files a.open-log[data-path$='.log']") || document.querySelector("#log-files a.open-log");
  if (firstLog) loadLog(firstLog.dataset.path, 0, false);

  var searchForm = document.getElementById("log-search");
  if (searchForm) searchForm.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var q = document.getElementById("log-search-q").value, status = document.getElementById("log-search-status");
    var hits = document.getElementById("log-hits");
    if (!q || !current.path) { status.textContent = current.path ? "type something" : "open a log first"; return; }
    status.textContent = "searching " + current.path + "…";
    var path = current.path;
    getJson(searchUrl + "?file=" + encodeURIComponent(path) + "&q=" + encodeURIComponent(q)).then(function (res) {
      hits.textContent = "";
      status.textContent = res.hits.length + " line(s)" + (res.truncated ? " (first ones only)" : "") + " in " + path;
      res.hits.forEach(function (h) {
        var li = document.createElement("li");
        li.dataset.offset = h.offset;
        var lower = h.snippet.toLowerCase(), at = lower.indexOf(q.toLowerCase());
        li.innerHTML = "<strong>line " + h.line + "</strong>: " + (at < 0 ? esc(h.snippet) :
          esc(h.snippet.slice(0, at)) + "<mark>" + esc(h.snippet.slice(at, at + q.length)) + "</mark>" + esc(h.snippet.slice(at + q.length)));
        li.addEventListener("click", function () { loadLog(path, h.offset, false); });
        hits.appendChild(li);
      });
      hits.dataset.count = res.hits.length;
    }).catch(function (e) { status.textContent = "search failed: " + e.message; });
  });

  // ---- code: highlighted by the server (Pygments), size-capped
  root.addEventListener("click", function (ev) {
    var link = ev.target.closest("a.open-code");
    if (!link) return;
    ev.preventDefault();
    var view = document.getElementById("code-view"), path = link.dataset.path;
    view.textContent = "Loading " + path + "…";
    getJson(fileUrl(path) + "?highlight=1").then(function (res) {
      if (res.too_large) {
        view.innerHTML = "<p class='small'>" + esc(path) + " is " + res.size.toLocaleString() + " bytes, too large to highlight: it is shown as text in the log viewer.</p>";
        loadLog(path, 0, false);
        return;
      }
      view.innerHTML = "<div class='small'><strong>" + esc(path) + "</strong></div>" + res.html;
      view.dataset.loaded = path;
    }).catch(function (e) { view.textContent = "Cannot read " + path + ": " + e.message; });
  });
  // A link to "#code=<path>" (an integrity finding's excerpt) opens that file.
  var wantedCode = /^#code=(.+)$/.exec(location.hash);
  if (wantedCode) {
    var wantedPath = decodeURIComponent(wantedCode[1]);
    var codeLink = Array.prototype.find.call(document.querySelectorAll("a.open-code"), function (a) { return a.dataset.path === wantedPath; });
    if (codeLink) { codeLink.click(); document.getElementById("code-view").scrollIntoView(); }
  }

  // ---- other agents' logs: JSON-lines events as a timeline of steps
  var timeline = document.getElementById("timeline-events");
  if (timeline) {
    var tlMore = document.getElementById("timeline-more"), tlNext = 0;
    var loadSteps = function () {
      getJson(root.dataset.timeline + "?file=" + encodeURIComponent(timeline.dataset.file) + "&offset=" + tlNext).then(function (res) {
        res.events.forEach(function (e) {
          var li = document.createElement("li");
          li.innerHTML = "<span class='label'>" + esc(e.label) + "</span> <span class='small muted'>" + esc(e.time) + "</span>" + (e.body ? "<pre>" + esc(e.body) + "</pre>" : "");
          timeline.appendChild(li);
        });
        tlNext = res.next_offset; tlMore.hidden = res.next_offset === null;
      });
    };
    tlMore.addEventListener("click", loadSteps);
    loadSteps();
  }

  // ---- AIDE's search tree
  var treeBox = document.getElementById("tree");
  if (!treeBox) return;
  var started = performance.now();
  getJson(root.dataset.trajectory + "?compact=1").then(function (data) {
    var t0 = performance.now();
    drawTree(data);
    drawCurve(data);
    var t1 = performance.now();
    treeBox.dataset.renderMs = (t1 - t0).toFixed(1);
    treeBox.dataset.totalMs = (t1 - started).toFixed(1);
    treeBox.dataset.nodes = data.nodes.length;
    treeBox.setAttribute("data-rendered", "1");
  }).catch(function (e) {
    treeBox.innerHTML = "<p class='error'>The search tree cannot be drawn: " + esc(e.message) + "</p>";
    treeBox.setAttribute("data-rendered", "error");
  });

  function colourOf(node, lo, hi, maximize) {
    if (node.is_buggy) return "#ffffff";
    if (node.metric === null || hi === null) return "#bdbdbd";
    var t = hi > lo ? (node.metric - lo) / (hi - lo) : 1;
    if (maximize === false) t = 1 - t;
    var a = [253, 174, 97], b = [26, 152, 80];
    return "rgb(" + a.map(function (v, i) { return Math.round(v + (b[i] - v) * t); }).join(",") + ")";
  }

  function drawTree(data) {
    var nodes = data.nodes, byId = {}, kids = {}, roots = [];
    nodes.forEach(function (n) { byId[n.id] = n; kids[n.id] = []; });
    nodes.forEach(function (n) { if (n.parent !== null && byId[n.parent]) kids[n.parent].push(n); else roots.push(n); });
    var bySteps = function (a, b) { return a.step - b.step; };
    roots.sort(bySteps);
    Object.keys(kids).forEach(function (k) { kids[k].sort(bySteps); });
    // Leaves take consecutive columns; a parent sits over its children (iterative post-order).
    var column = 0, maxDepth = 0, pos = {};
    roots.forEach(function (r) {
      var stack = [[r, 0, false]];
      while (stack.length) {
        var top = stack.pop(), n = top[0], depth = top[1];
        if (!top[2]) {
          stack.push([n, depth, true]);
          for (var i = kids[n.id].length - 1; i >= 0; i--) stack.push([kids[n.id][i], depth + 1, false]);
        } else {
          var ch = kids[n.id];
          var x = ch.length ? (pos[ch[0].id].x + pos[ch[ch.length - 1].id].x) / 2 : column++;
          pos[n.id] = { x: x, y: depth };
          if (depth > maxDepth) maxDepth = depth;
        }
      }
    });
    var metrics = nodes.filter(function (n) { return !n.is_buggy && n.metric !== null; }).map(function (n) { return n.metric; });
    var lo = metrics.length ? Math.min.apply(null, metrics) : null, hi = metrics.length ? Math.max.apply(null, metrics) : null;
    var dx = 22, dy = 48, pad = 18, r = 7, labelGap = 12;
    var width = Math.max(1, column) * dx + 2 * pad, height = (maxDepth + 1) * dy + 2 * pad;
    var px = function (p) { return pad + p.x * dx + dx / 2; }, py = function (p) { return pad + p.y * dy + r; };
    var parts = ['<svg xmlns="' + SVGNS + '" width="' + width + '" height="' + height + '" role="img" aria-label="search tree">'];
    nodes.forEach(function (n) {
      if (n.parent === null || !byId[n.parent]) return;
      var a = pos[n.parent], b = pos[n.id], best = n.on_best_path && byId[n.parent].on_best_path;
      parts.push('<line x1="' + px(a) + '" y1="' + py(a) + '" x2="' + px(b) + '" y2="' + py(b) + '" stroke="' + (best ? "#6a3d9a" : "#bbb") + '" stroke-width="' + (best ? 3.5 : 1) + '"/>');
    });
    nodes.forEach(function (n) {
      var p = pos[n.id];
      var title = "step " + n.step + " · " + n.kind + (n.is_buggy ? " · buggy" : "") + (n.metric !== null ? " · metric " + window.mleboardNumbers.formatScore(n.metric) : "") + (n.id === data.best ? " · best" : "");
      parts.push('<circle data-id="' + esc(n.id) + '" class="node ' + n.kind + (n.is_buggy ? " buggy" : "") + (n.on_best_path ? " best-path" : "") + '" cx="' + px(p) + '" cy="' + py(p) + '" r="' + (n.id === data.best ? r + 3 : r) +
        '" fill="' + colourOf(n, lo, hi, data.maximize) + '" stroke="' + (n.is_buggy ? "#d73027" : n.on_best_path ? "#6a3d9a" : "#555") + '" stroke-width="' + (n.is_buggy || n.on_best_path ? 2.5 : 1) + '"><title>' + esc(title) + "</title></circle>");
      if (n.is_buggy) parts.push('<text x="' + px(p) + '" y="' + (py(p) + 3.5) + '" text-anchor="middle" font-size="9" fill="#d73027" pointer-events="none">×</text>');
      // Its step under each node; the best node also gives its metric.
      var label = String(n.step) + (n.id === data.best && n.metric !== null ? " · " + window.mleboardNumbers.formatScore(n.metric) : "");
      parts.push('<text class="node-label" x="' + px(p) + '" y="' + (py(p) + r + labelGap) + '" text-anchor="middle">' + esc(label) + "</text>");
    });
    parts.push("</svg>");
    treeBox.innerHTML = parts.join("");
    treeBox.addEventListener("click", function (ev) {
      var c = ev.target.closest("circle[data-id]");
      if (!c) return;
      treeBox.querySelectorAll("circle.selected").forEach(function (s) { s.classList.remove("selected"); });
      c.classList.add("selected");
      showNode(c.getAttribute("data-id"));
    });
  }

  function showNode(id) {
    var box = document.getElementById("node-detail");
    box.hidden = false;
    box.textContent = "Loading node " + id + "…";
    getJson(root.dataset.trajectory + "?node=" + encodeURIComponent(id)).then(function (n) {
      box.innerHTML = "<h3>Step " + n.step + " · " + esc(n.kind) + (n.is_buggy ? " · <span class='error'>buggy</span>" : "") +
        " · metric " + (n.metric === null ? "—" : esc(window.mleboardNumbers.formatScore(n.metric))) + (n.exec_time !== null ? " · ran " + n.exec_time.toFixed(1) + " s" : "") + "</h3>" +
        "<h4>Plan</h4><pre class='node-plan'>" + esc(n.plan || "—") + "</pre>" +
        "<h4>Code</h4><div class='node-code'>" + n.code_html + "</div>" +
        "<h4>Execution output</h4><pre class='node-output'>" + esc(n.term_out || "—") + "</pre>" +
        (n.analysis ? "<h4>Analysis</h4><pre>" + esc(n.analysis) + "</pre>" : "");
      box.dataset.node = id;
    }).catch(function (e) { box.textContent = "Cannot read node " + id + ": " + e.message; });
  }

  function drawCurve(data) {
    var box = document.getElementById("best-curve"), pts = data.best_so_far;
    if (!pts.length) { box.innerHTML = "<p class='muted small'>No working node yet: no best-so-far curve.</p>"; return; }
    var useTime = pts.every(function (p) { return p.elapsed_s !== null; });
    var xs = pts.map(function (p) { return useTime ? p.elapsed_s / 60 : p.step; }), ys = pts.map(function (p) { return p.metric; });
    var w = 320, h = 240, l = 48, b = 30, t = 24, rr = 10;
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs), y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
    if (x1 === x0) x1 = x0 + 1;
    if (y1 === y0) { y1 = y0 + 1e-9 + Math.abs(y0) * 0.01; }
    var sx = function (v) { return l + (v - x0) / (x1 - x0) * (w - l - rr); }, sy = function (v) { return h - b - (v - y0) / (y1 - y0) * (h - b - t); };
    var line = [], prevY = null;
    xs.forEach(function (x, i) {
      if (prevY !== null) line.push(sx(x).toFixed(1) + "," + prevY.toFixed(1));
      prevY = sy(ys[i]); line.push(sx(x).toFixed(1) + "," + prevY.toFixed(1));
    });
    box.innerHTML = '<svg xmlns="' + SVGNS + '" width="' + w + '" height="' + h + '" role="img" aria-label="best so far">' +
      '<text x="' + l + '" y="14" font-size="11">best metric so far</text>' +
      '<line x1="' + l + '" y1="' + (h - b) + '" x2="' + (w - rr) + '" y2="' + (h - b) + '" stroke="#999"/><line x1="' + l + '" y1="' + t + '" x2="' + l + '" y2="' + (h - b) + '" stroke="#999"/>' +
      '<polyline fill="none" stroke="#1a9850" stroke-width="2" points="' + line.join(" ") + '"/>' +
      '<text x="' + (l - 4) + '" y="' + (t + 4) + '" font-size="10" text-anchor="end">' + esc(+y1.toPrecision(4)) + "</text>" +
      '<text x="' + (l - 4) + '" y="' + (h - b) + '" font-size="10" text-anchor="end">' + esc(+y0.toPrecision(4)) + "</text>" +
      '<text x="' + ((l + w) / 2) + '" y="' + (h - 6) + '" font-size="10" text-anchor="middle">' + (useTime ? "minutes since the first node" : "step") + " (0–" + esc(+x1.toPrecision(3)) + ")</text></svg>";
  }
})();
