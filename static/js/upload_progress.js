// Live progress of an upload: poll the API until the upload is graded or failed.
(function () {
  var root = document.getElementById("upload-progress");
  if (!root) return;
  function text(id, value) { document.getElementById(id).textContent = value; }
  function render(p) {
    text("up-status", p.status);
    text("up-graded", p.runs_graded);
    text("up-total", p.runs_total);
    text("up-failed", p.runs_failed);
    var bar = document.getElementById("up-bar");
    bar.max = Math.max(p.runs_total, 1); bar.value = p.runs_graded + p.runs_failed;
    var waiting = document.getElementById("up-waiting");
    waiting.hidden = !p.waiting_for_worker; waiting.textContent = p.message || "";
    var error = document.getElementById("up-error");
    error.hidden = !p.error; error.textContent = p.error || "";
    if (p.experiment) {
      document.getElementById("up-experiment").hidden = false;
      document.getElementById("up-experiment-link").href = "/experiments/" + p.experiment + "/";
    }
    text("up-invalid", p.runs_invalid);
    function list(id, items, withReason) {
      var ul = document.getElementById(id);
      if (!items.length) {
        var none = document.createElement("li");
        none.className = "muted"; none.textContent = "None.";
        ul.replaceChildren(none);
        return;
      }
      ul.replaceChildren.apply(ul, items.map(function (f) {
        var li = document.createElement("li");
        li.textContent = f.competition_id + " seed " + f.seed + (withReason ? ": " + f.reason : "");
        return li;
      }));
    }
    var graded = p.invalid_submissions || [];
    list("up-failures", p.failures, true);
    // A run that made no submission counts as 0 too, but is not an invalid submission.
    list("up-invalid-list", graded.filter(function (f) { return f.submission_made !== false; }), true);
    list("up-missing-list", graded.filter(function (f) { return f.submission_made === false; }), false);
  }
  function poll() {
    fetch(root.dataset.url, {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (p) {
      render(p);
      if (!p.is_final) setTimeout(poll, 1000);
    }).catch(function () { setTimeout(poll, 3000); });
  }
  poll();
})();
