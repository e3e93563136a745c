// The suggest page: an uploaded file fills the source box; with a key, evaluate through the API
// (POST /v1/suggestions with evaluate, then poll /v1/evaluation-jobs/{id}) and offer the tuned file.
(function () {
  "use strict";
  var file = document.getElementById("file");
  if (file) {
    file.addEventListener("change", function () {
      var f = file.files && file.files[0];
      if (!f) return;
      f.text().then(function (text) {
        document.getElementById("source").value = text;
        var name = document.getElementById("name");
        if (!name.value) name.value = f.name;
      });
    });
  }
  var start = document.getElementById("eval-start");
  if (!start) return;
  var status = document.getElementById("eval-status");
  var out = document.getElementById("eval-result");
  var request = JSON.parse(document.getElementById("suggest-request").textContent);

  function line(text, cls) {
    var p = document.createElement("p");
    p.textContent = text;
    if (cls) p.className = cls;
    out.appendChild(p);
  }

  function speedup(x) { return x === null || x === undefined ? "-" : x.toFixed(2) + "x"; }

  function show(result) {
    out.textContent = "";
    result.nests.forEach(function (n) {
      var h = document.createElement("h3");
      h.textContent = n.name;
      out.appendChild(h);
      (n.results || []).forEach(function (r) {
        var why = r.message && r.status !== "ok" ? " (" + r.message + ")" : "";
        line(r.from + ": " + r.status + why + ", verified=" + r.verified + ", screening speedup " + speedup(r.speedup) +
             (r.confirmed ? "; re-measured " + r.confirmed.text : ""));
      });
      if ("accepted" in n && n.accepted !== null && n.accepted !== undefined) {
        var best = n.best || {};
        line("accepted: " + (n.accepted ? best.text + " from " + best.from + ": " + (best.recipe_text || JSON.stringify(best.recipe))
                                        : "no candidate held up"), n.accepted ? "ok" : "note");
      }
    });
  }

  function poll(location, key) {
    fetch(location, {headers: {Authorization: "Bearer " + key}})
      .then(function (r) { return r.json(); })
      .then(function (job) {
        if (job.status === "done") {
          status.textContent = "Evaluation done.";
          show(job.result);
          document.getElementById("tuned-job").value = job.id;
          document.getElementById("tuned-key").value = key;  // the job is the key's: the download asks for it
          // The same rule as the server's tuned file: a nest held up, and the whole program (when it was
          // run) kept the gain. Never offer the original as if it were tuned.
          var accepted = job.result.nests.some(function (n) { return n.accepted; });
          var program = job.result.program;
          if (accepted && !(program && !program.accepted)) {
            document.getElementById("tuned-form").hidden = false;
          } else {
            line(accepted ? "Nothing to download: the whole program refused the tuned nests (" + program.status + ")."
                          : "Nothing to download: no recipe held up, the program stays as it is.", "note");
          }
          start.disabled = false;
        } else if (job.status === "failed") {
          status.textContent = "Evaluation failed: " + (job.error ? job.error.message : "unknown error");
          start.disabled = false;
        } else {
          status.textContent = job.status === "queued" ? "Queued (position " + job.queue_position + ")"
                                                       : "Running: " + (job.progress ? job.progress.text : "starting");
          window.setTimeout(function () { poll(location, key); }, 500);
        }
      })
      .catch(function (err) { status.textContent = "Lost the evaluation job: " + err; start.disabled = false; });
  }

  start.addEventListener("click", function () {
    var key = perfembedKey("eval-key", status, "Evaluating needs an API key: enter it first.");
    if (!key) {
      return;
    }
    start.disabled = true;
    status.textContent = "Sending the program…";
    var body = Object.assign({}, request, {evaluate: true, fallback: false});
    fetch("/v1/suggestions", {method: "POST", body: JSON.stringify(body),
                              headers: {"Content-Type": "application/json", Authorization: "Bearer " + key}})
      .then(function (r) { return r.json().then(function (b) { return {r: r, body: b}; }); })
      .then(function (res) {
        if (res.r.status === 202) {
          poll(res.r.headers.get("Location"), key);
        } else {
          status.textContent = "Not evaluated: " + res.body.message;
          start.disabled = false;
        }
      })
      .catch(function (err) { status.textContent = "Not evaluated: " + err; start.disabled = false; });
  });
})();
