// The API key typed in field `fieldId`, or null after showing `message` in `status` and focusing the field.
// Shared by the pages that write through the API (jobs.js cancels, suggest.js evaluates).
function perfembedKey(fieldId, status, message) {
  "use strict";
  var field = document.getElementById(fieldId);
  var key = field.value.trim();
  if (!key) {
    status.textContent = message;
    field.focus();
    return null;
  }
  return key;
}
