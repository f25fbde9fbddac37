// Beyond chat: keyboard sending, attach-on-choose, panels on small screens, keep the latest in view.
// A static file because the Content-Security-Policy forbids inline script.
(function () {
  "use strict";

  function nearBottom(el) {
    return el.scrollHeight - el.scrollTop - el.clientHeight < 120;
  }

  function scrollToEnd(el) {
    el.scrollTop = el.scrollHeight;
  }

  document.addEventListener("keydown", function (event) {
    var box = event.target;
    if (!box.matches || !box.matches("#chat-form textarea[name='message']")) return;
    // Enter sends; Shift+Enter is a new line; never send while an IME is composing.
    if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
    event.preventDefault();
    if (box.value.trim() && box.form.reportValidity()) box.form.requestSubmit();
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt;
    if (form.id === "chat-form" && event.detail.successful) {
      var box = form.querySelector("textarea[name='message']");
      // Keep the text if the server sent nothing back (e.g. the task was refused).
      if (event.detail.xhr && event.detail.xhr.status === 200 && !event.detail.xhr.getResponseHeader("HX-Reswap")) {
        box.value = "";
      }
      box.focus();
    }
    if (form.id === "upload-form") form.reset();
  });

  document.addEventListener("change", function (event) {
    if (event.target.id === "upload-files" && event.target.files.length) {
      event.target.form.requestSubmit();
    }
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("[data-toggle]") : null;
    if (!button) return;
    var panel = document.getElementById(button.getAttribute("aria-controls"));
    if (!panel) return;
    var open = panel.classList.toggle("is-open");
    button.setAttribute("aria-expanded", open ? "true" : "false");
  });

  var wasNearBottom = true;
  document.addEventListener("htmx:wsBeforeMessage", function () {
    var messages = document.getElementById("messages");
    wasNearBottom = messages ? nearBottom(messages) : false;
  });
  document.addEventListener("htmx:wsAfterMessage", function () {
    var messages = document.getElementById("messages");
    if (messages && wasNearBottom) scrollToEnd(messages);
  });

  document.addEventListener("DOMContentLoaded", function () {
    var messages = document.getElementById("messages");
    if (messages) scrollToEnd(messages);
  });
})();
