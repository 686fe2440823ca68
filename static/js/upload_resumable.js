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
    ["scaffold", "model", "agent_version", "name", "hardware"].forEach(function (k) {
      var v = (data.get(k) || "").trim(); if (v) meta[k] = v;
    });
    // The conditions, as typed: the server reads them with the form's own rules.
    var disclosed = {};
    data.forEach(function (value, key) {
      var v = typeof value === "string" ? value.trim() : "";
      if (key.indexOf("disclosure-") === 0 && v) disclosed[key.slice(11)] = v;
    });
    if (Object.keys(disclosed).length) meta.disclosure = disclosed;
    ["test_feedback"].forEach(function (k) {
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

  // A message beside a field (its own row of the form), or none.
  function fieldError(name, text) {
    var input = form.querySelector("[name=" + name + "]");
    var id = "field-error-" + name;
    var box = document.getElementById(id);
    if (!text) { if (box) box.remove(); return; }
    if (!box) {
      box = document.createElement("ul");
      box.id = id;
      box.className = "errorlist field-error";
      input.insertAdjacentElement("afterend", box);
    }
    box.replaceChildren(Object.assign(document.createElement("li"), {textContent: text}));
  }

  // What an archive's first bytes must be for its name (the server checks the same way;
  // here a wrong file is refused before a byte is sent). Other names, and plain tars (an
  // old tar has no magic bytes): the server decides.
  var MAGIC = [
    [/\.zip$/i, "a zip archive", function (b) { return b[0] === 0x50 && b[1] === 0x4b && (b[2] === 3 || b[2] === 5); }],
    [/\.(tar\.gz|tgz|gz)$/i, "a gzip file", function (b) { return b[0] === 0x1f && b[1] === 0x8b; }],
    [/\.(tar\.bz2|tbz2?|bz2)$/i, "a bzip2 file", function (b) { return b[0] === 0x42 && b[1] === 0x5a && b[2] === 0x68; }],
    [/\.(tar\.xz|txz|xz)$/i, "an xz file", function (b) { return b[0] === 0xfd && b[1] === 0x37 && b[2] === 0x7a && b[3] === 0x58 && b[4] === 0x5a; }],
  ];
  function checkMagic(file) {
    var rule = MAGIC.filter(function (r) { return r[0].test(file.name); })[0];
    if (!rule) return Promise.resolve("");
    return file.slice(0, 512).arrayBuffer().then(function (buffer) {
      var bytes = Array.prototype.slice.call(new Uint8Array(buffer));
      if (rule[2](bytes)) return "";
      return "“" + file.name + "” is not " + rule[1] + ": its first bytes say otherwise" +
        (file.size ? "" : " (the file is empty)") + ". Choose the archive itself.";
    });
  }

  form.addEventListener("submit", function (event) {
    var file = form.querySelector("input[name=archive]").files[0];
    if (!file) return;  // let the form say what is missing
    event.preventDefault();
    var meta;
    fieldError("seeds", "");
    try { meta = metadata(); } catch (e) { fieldError("seeds", e.message); say(e.message, true); return; }
    checkMagic(file).then(function (wrong) {
      fieldError("archive", wrong);
      if (wrong) { say(wrong, true); return; }
      send(file, meta);
    });
  });

  function send(file, meta) {
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
  }
  showUnfinished();
})();
