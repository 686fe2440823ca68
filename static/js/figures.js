// Draw every figure embedded as JSON by the server (see templates/plotly_figure.html).
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("div.figure[data-figure-id]").forEach(function (el) {
    var source = document.getElementById(el.dataset.figureId + "-data");
    if (!source) return;
    var fig = JSON.parse(source.textContent);
    if (fig.table) fillFromTable(fig);
    if (fig.narrow && el.clientWidth < fig.narrow.below) fitNarrow(fig, el.clientWidth);
    // A figure taller than the box's minimum gets a box of its height (else it spills over
    // what follows).
    if (fig.layout && fig.layout.height) el.style.height = fig.layout.height + "px";
    Plotly.newPlot(el, fig.data, fig.layout, {responsive: true, displaylogo: false}).then(function () {
      el.dataset.rendered = "true";
    });
  });
});

// A figure whose numbers the page's table holds (webapp/figures/__init__.py,
// leaderboard_dots_from_table): one dot per row and split, at the cell's mean (its
// data-value) with its "± SEM" as the error bar; rows named by the agent link's title,
// with the experiment's id when two rows share a name.
function fillFromTable(fig) {
  var table = document.getElementById(fig.table.id);
  var rows = Array.prototype.filter.call(table.tBodies[0].rows, function (r) { return r.dataset.experiment; });
  var names = rows.map(function (r) { return r.querySelector("td.agent a").title; });
  var seen = {};
  names.forEach(function (n) { seen[n] = (seen[n] || 0) + 1; });
  names = names.map(function (n, i) { return seen[n] > 1 ? n + " #" + rows[i].dataset.experiment : n; });
  // Exactly the rows, the first at the top (webapp.figures.row_range).
  fig.layout.yaxis.range = [names.length - 0.5, -0.5];
  fig.data.forEach(function (trace, t) {
    var split = fig.table.splits[t];
    trace.y = names;
    trace.x = [];
    trace.error_x.array = [];
    rows.forEach(function (r) {
      var cell = r.querySelector('td[data-split="' + split + '"]');
      var pm = cell && cell.querySelector(".pm");
      trace.x.push(pm ? parseFloat(cell.dataset.value) : null);
      trace.error_x.array.push(pm ? parseFloat(pm.textContent.replace("±", "")) || 0 : 0);
    });
  });
}

// A phone: the figure's own layout for narrow boxes (webapp/figures/__init__.py, NARROW_BELOW_PX)
// merged over its layout, and, for a figure that asks, its row labels shortened to what
// the box has room for (the whole name stays in the hover).
function fitNarrow(fig, width) {
  merge(fig.layout, fig.narrow.layout || {});
  // Legend entries (experiments' long names) cut to a line of the box.
  var line = Math.max(12, Math.floor((width - 60) / 7.5));
  fig.data.forEach(function (trace) {
    if (trace.name && trace.name.length > line) trace.name = trace.name.slice(0, line - 1) + "…";
  });
  var axis = fig.narrow.shorten_labels_of;  // "x" or "y"
  if (!axis || !fig.data.length) return;
  var most = Math.max(12, Math.floor(width * fig.narrow.label_share / fig.narrow.char_px));
  var names = fig.data[0][axis];
  fig.layout[axis + "axis"].tickvals = names;
  fig.layout[axis + "axis"].ticktext = names.map(function (n) {
    return n.length > most ? n.slice(0, most - 1) + "…" : n;
  });
}

function merge(target, source) {
  Object.keys(source).forEach(function (key) {
    var value = source[key];
    if (value && typeof value === "object" && !Array.isArray(value) && target[key] && typeof target[key] === "object") {
      merge(target[key], value);
    } else {
      target[key] = value;
    }
  });
}
