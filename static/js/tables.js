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
// The compare picker: two or more ticked rows -> /compare/?experiments=a,b
(function () {
  var form = document.getElementById("compare-form");
  if (!form) return;
  var button = document.getElementById("compare-button");
  function picked() {
    return Array.prototype.map.call(form.querySelectorAll(".compare-pick:checked"), function (c) { return c.value; });
  }
  form.addEventListener("change", function () { button.disabled = picked().length < 2; });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    // The subset shown (the clean one) is kept.
    var clean = form.querySelector("input[name=clean]");
    window.location = form.action + "?experiments=" + picked().join(",") + (clean ? "&clean=" + clean.value : "");
  });
})();
