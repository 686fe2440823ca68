// Sort any table.sortable by clicking a header; numbers sort by their data-value.
document.querySelectorAll("table.sortable").forEach(function (table) {
  var headers = table.querySelectorAll("thead th");
  headers.forEach(function (th, index) {
    if (!th.classList.contains("sortable")) return;
    th.addEventListener("click", function () {
      var numeric = th.dataset.type === "num";
      var descending = !th.classList.contains("sorted-desc");
      headers.forEach(function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
      th.classList.add(descending ? "sorted-desc" : "sorted-asc");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[index], y = b.cells[index];
        var vx = x.dataset.value !== undefined ? x.dataset.value : x.textContent.trim();
        var vy = y.dataset.value !== undefined ? y.dataset.value : y.textContent.trim();
        var cmp = numeric ? (parseFloat(vx) - parseFloat(vy)) : vx.localeCompare(vy);
        return descending ? -cmp : cmp;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
// The leaderboard's Conditions tooltips, from its marks and what each means (sent once,
// webapp/results/pages/leaderboard.py CONDITIONS): on the cell every flag spelled out (a mark
// absent: no; "?": not stated), on each mark its meaning.
(function () {
  var source = document.getElementById("conditions-meanings");
  if (!source) return;
  var meanings = JSON.parse(source.textContent);
  document.querySelectorAll("table.leaderboard td.conditions").forEach(function (cell) {
    var said = [];
    Object.keys(meanings).forEach(function (key) {
      var mark = cell.querySelector('.cond[data-flag="' + key + '"]');
      var unknown = mark && mark.classList.contains("unknown");
      said.push(meanings[key] + ": " + (!mark ? "no" : unknown ? "?" : "yes"));
      if (mark) mark.title = unknown ? meanings[key] + ": not stated" : meanings[key];
    });
    cell.title = said.join(" · ");
  });
})();
// The compare picker: ticked rows -> /compare/?experiments=a,b. The bar under the table
// sticks to the bottom of the window and counts the selection (W&B tables' style).
(function () {
  var form = document.getElementById("compare-form");
  if (!form) return;
  var button = document.getElementById("compare-button");
  var count = document.getElementById("compare-count");
  var clear = document.getElementById("compare-clear");
  var hint = document.getElementById("compare-hint");
  function picked() {
    return Array.prototype.map.call(form.querySelectorAll(".compare-pick:checked"), function (c) { return c.value; });
  }
  function update() {
    var n = picked().length;
    count.textContent = n;
    button.disabled = n < 2;
    clear.hidden = n === 0;
    hint.textContent = n >= 2 ? "" : (n === 1 ? "Tick one more row." : "Tick two or more rows.");
  }
  form.addEventListener("change", update);
  clear.addEventListener("click", function () {
    form.querySelectorAll(".compare-pick:checked").forEach(function (c) { c.checked = false; });
    update();
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    // The subset shown (the clean one) is kept.
    var clean = form.querySelector("input[name=clean]");
    window.location = form.action + "?experiments=" + picked().join(",") + (clean ? "&clean=" + clean.value : "");
  });
  update();
})();
