// Cancel a tuning job through the API (DELETE /v1/tuning-jobs/{id}) with the key typed on the page.
(function () {
  "use strict";
  var status = document.getElementById("jobs-status");
  document.querySelectorAll("button.cancel").forEach(function (button) {
    button.addEventListener("click", function () {
      var key = perfembedKey("write-key", status, "Cancelling needs an API key: enter it above.");
      if (!key) {
        return;
      }
      var id = button.getAttribute("data-job");
      fetch("/v1/tuning-jobs/" + id, {method: "DELETE", headers: {Authorization: "Bearer " + key}})
        .then(function (r) { return r.json().then(function (body) { return {ok: r.ok, body: body}; }); })
        .then(function (res) {
          if (res.ok) {
            status.textContent = "Job " + id + " is " + res.body.status + ".";
            window.setTimeout(function () { window.location.reload(); }, 600);
          } else {
            status.textContent = "Job " + id + " was not cancelled: " + res.body.message;
          }
        })
        .catch(function (err) { status.textContent = "Job " + id + " was not cancelled: " + err; });
    });
  });
})();
