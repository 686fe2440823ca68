// Draw every figure embedded as JSON by the server (see templates/plotly_figure.html).
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("div.figure[data-figure-id]").forEach(function (el) {
    var source = document.getElementById(el.dataset.figureId + "-data");
    if (!source) return;
    var fig = JSON.parse(source.textContent);
    // A figure taller than the box's minimum gets a box of its height (else it spills over
    // what follows).
    if (fig.layout && fig.layout.height) el.style.height = fig.layout.height + "px";
    Plotly.newPlot(el, fig.data, fig.layout, {responsive: true, displaylogo: false}).then(function () {
      el.dataset.rendered = "true";
    });
  });
});
