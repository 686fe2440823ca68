// The upload page sends the archive in pieces (tus, tus-js-client), so a dropped connection
// or a reloaded page continues where it stopped: after a reload, the page lists the
// unfinished uploads; choosing the same file again continues it (the browser remembers
// where, by the file's name, size and date). Without JavaScript the form posts the archive
// in one request, as before.
(function () {
  var form = document.getElementById("upload-form");
  var box = document.getElementById("resumable");
  if (!form || !box || !window.tus || !tus.isSupported) return;
  var endpoint = box.dataset.endpoint;
  var chunk = parseInt(box.dataset.chunkBytes, 10);
  var csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  var bar = document.getElementById("resumable-bar");
  var status = document.getElementById("resumable-status");
  var list = document.getElementById("unfinished-list");
  var button = form.querySelector("button[type=submit]");

  function size(n) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : n) + " " + units[i];
  }

  function showUnfinished() {
    fetch(endpoint, {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (data) {
      var uploads = data.uploads || [];
      document.getElementById("unfinished").hidden = !uploads.length;
      list.replaceChildren.apply(list, uploads.map(function (u) {
        var li = document.createElement("li");
        var pct = Math.floor(100 * u.offset / u.length);
        li.textContent = u.filename + " (" + [u.scaffold, u.model].filter(Boolean).join(" × ") + "): " +
          pct + "% — " + size(u.offset) + " of " + size(u.length) + " received. Choose the same file to continue.";
        return li;
      }));
    }).catch(function () {});
  }

  function metadata() {
    var data = new FormData(form), meta = {};
    ["scaffold", "model", "agent_version", "name", "hardware", "source_url"].forEach(function (k) {
      var v = (data.get(k) || "").trim(); if (v) meta[k] = v;
    });
    var hours = (data.get("runtime_hours") || "").trim();
    if (hours) meta.runtime_hours = Number(hours);
    ["internet_access", "test_feedback"].forEach(function (k) {
      var v = data.get(k); if (v === "true" || v === "false") meta[k] = v === "true";
    });
    if (data.get("obfuscated_descriptions")) meta.obfuscated_descriptions = true;
    var seeds = (data.get("seeds") || "").trim();
    if (seeds) {
      try { meta.seeds = JSON.parse(seeds); } catch (e) { throw new Error("seeds is not valid JSON: " + e.message); }
    }
    return meta;
  }

  function say(text, isError) {
    status.textContent = text;
    status.className = isError ? "notice warn" : "muted";
  }

  form.addEventListener("submit", function (event) {
    var file = form.querySelector("input[name=archive]").files[0];
    if (!file) return;  // let the form say what is missing
    event.preventDefault();
    var meta;
    try { meta = metadata(); } catch (e) { say(e.message, true); return; }
    var page = null;
    button.disabled = true;
    box.hidden = false;
    var upload = new tus.Upload(file, {
      endpoint: endpoint,
      chunkSize: chunk,
      retryDelays: [0, 1000, 3000, 5000, 10000],
      metadata: {filename: file.name, metadata: JSON.stringify(meta)},
      headers: {"X-CSRFToken": csrf},
      removeFingerprintOnSuccess: true,
      onProgress: function (sent, total) {
        bar.max = total; bar.value = sent;
        window.mleboardUploadOffset = sent;
        say("Sending " + file.name + ": " + Math.floor(100 * sent / total) + "% (" + size(sent) + " of " + size(total) + "). You may close or reload this page: choose the same file to continue.");
      },
      onAfterResponse: function (req, res) {
        var target = res.getHeader("Mleboard-Upload-Page");
        if (target) page = target;
      },
      onError: function (error) {
        var text = String(error && error.message || error);
        var body = error && error.originalResponse && error.originalResponse.getBody();
        try { text = JSON.parse(body).error || text; } catch (e) {}
        say("Upload stopped: " + text, true);
        button.disabled = false;
      },
      onSuccess: function () {
        say("Received. Opening the upload's page…");
        window.location.href = page || "/uploads/";
      },
    });
    upload.findPreviousUploads().then(function (previous) {
      if (previous.length) upload.resumeFromPreviousUpload(previous[0]);
      upload.start();
    });
  });
  showUnfinished();
})();
