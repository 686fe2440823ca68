// Live status of a launch's runs and the log tail of the chosen run (polled).
(function () {
  var root = document.getElementById("launch-status");
  if (!root) return;
  var logUrl = null;
  function refresh() {
    fetch(root.dataset.url, {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (data) {
      var active = false;
      data.runs.forEach(function (run) {
        var row = root.querySelector('tr[data-run="' + run.id + '"]');
        if (!row) return;
        row.querySelector(".run-status").innerHTML = '<span class="badge">' + run.status + "</span>";
        row.querySelector(".run-grading").textContent = run.grading || "";
        row.querySelector(".run-exit").textContent = run.exit_code === null ? "" : run.exit_code;
        row.querySelector(".run-duration").textContent = run.duration_s === null ? "" : run.duration_s.toFixed(1);
        var message = row.querySelector(".run-message");
        message.textContent = run.message;
        if (run.no_worker) {
          var note = document.createElement("span");
          note.className = "badge warn no-worker";
          note.textContent = run.no_worker;
          message.append(" ", note);
        }
        // A finished run can no longer be cancelled: its button goes.
        if (run.is_final) {
          var cancel = row.querySelector(".cancel-run");
          if (cancel) cancel.closest("form").remove();
        }
        if (!run.is_final || run.grading_is_final === false) active = true;
      });
      if (logUrl) showLog(logUrl);
      if (active) setTimeout(refresh, 2000);
    });
  }
  function showLog(url) {
    fetch(url, {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (run) {
      document.getElementById("run-log").textContent = run.log_tail || run.log_note || "(no output yet)";
    });
  }
  root.addEventListener("click", function (event) {
    if (event.target.classList.contains("show-log")) {
      event.preventDefault();
      logUrl = event.target.dataset.log;
      document.getElementById("run-log-which").textContent = "of " + event.target.dataset.label;
      root.querySelectorAll("tr.log-shown").forEach(function (tr) { tr.classList.remove("log-shown"); });
      event.target.closest("tr").classList.add("log-shown");
      document.getElementById("run-log").textContent = "Loading…";
      showLog(logUrl);
    }
  });
  refresh();
})();
