// Copy from the chat: a step (its Markdown, written by the server as the exports write it), a table
// (its cells as tab-separated text, which a spreadsheet pastes as cells) and the whole document (the
// client edition's Markdown); elsewhere, a field's value (an invitation link). Each button says "Copied" (or why not) where it was pressed, and a
// status line says it to screen readers. A static file because the Content-Security-Policy forbids
// inline script.
(function () {
  "use strict";

  var SHOWN_MS = 2500;
  // What a spreadsheet reads as the start of a formula when the text is pasted (the exports' guard).
  var FORMULA_START = /^[=+\-@\t\r]/;
  var NUMBER = /^[+\-]?\d[\d.,\s\u00a0\u202f]*%?$/;

  function announce(text) {
    var region = document.getElementById("copy-status");
    if (!region) {
      region = document.createElement("div");
      region.id = "copy-status";
      region.className = "visually-hidden";
      region.setAttribute("role", "status");
      region.setAttribute("aria-live", "polite");
      document.body.appendChild(region);
    }
    region.textContent = text;
  }

  function say(button, text, ok) {
    if (!button.hasAttribute("data-label")) button.setAttribute("data-label", button.textContent);
    button.textContent = text;
    button.classList.toggle("is-copied", ok);
    button.classList.toggle("is-failed", !ok);
    announce(text);
    clearTimeout(button.copyTimer);
    button.copyTimer = setTimeout(function () {
      button.textContent = button.getAttribute("data-label");
      button.classList.remove("is-copied", "is-failed");
    }, SHOWN_MS);
  }

  function fetched(url) {
    return fetch(url, { credentials: "same-origin" }).then(function (response) {
      if (!response.ok) throw new Error("the server answered " + response.status);
      return response.text();
    });
  }

  function writeFetched(url) {
    // Handed a promise of the text (ClipboardItem), the browser keeps the click's permission to
    // write while the text is fetched; without ClipboardItem, the text is written when it arrives.
    if (window.ClipboardItem && navigator.clipboard && navigator.clipboard.write) {
      var blob = fetched(url).then(function (text) { return new Blob([text], { type: "text/plain" }); });
      return navigator.clipboard.write([new ClipboardItem({ "text/plain": blob })]);
    }
    return fetched(url).then(function (text) { return navigator.clipboard.writeText(text); });
  }

  function cellText(cell) {
    var text = cell.textContent.replace(/\s+/g, " ").trim();
    // A pasted cell is read as if typed: an apostrophe keeps model text from running as a formula.
    return FORMULA_START.test(text) && !NUMBER.test(text) ? "'" + text : text;
  }

  function tabSeparated(table) {
    return Array.prototype.map.call(table.rows, function (row) {
      return Array.prototype.map.call(row.cells, cellText).join("\t");
    }).join("\n") + "\n";
  }

  function stepUrl(button) {
    var run = button.closest("[data-step-markdown]");
    var step = button.closest("[data-step]");
    if (!run || !step) return null;
    return run.getAttribute("data-step-markdown").replace(/\/0\.md$/, "/" + step.getAttribute("data-step") + ".md");
  }

  function copy(button) {
    var kind = button.getAttribute("data-copy");
    var done = { step: "Step copied", table: "Table copied", document: "Document copied", field: "Link copied" }[kind] || "Copied";
    var writing;
    if (!navigator.clipboard) {
      say(button, "Cannot copy here (the browser allows it on secure pages only)", false);
      return;
    }
    if (kind === "table") {
      var table = button.nextElementSibling;
      writing = navigator.clipboard.writeText(tabSeparated(table));
    } else if (kind === "field") {
      var field = document.getElementById(button.getAttribute("data-copy-field"));
      writing = field ? navigator.clipboard.writeText(field.value) : Promise.reject(new Error("no field"));
    } else {
      var url = kind === "step" ? stepUrl(button) : button.getAttribute("data-copy-url");
      writing = writeFetched(url);
    }
    writing.then(function () { say(button, done, true); },
                 function () { say(button, "Could not copy: try again", false); });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-copy]") : null;
    if (button) copy(button);
  });

  // A table in a released step gets its own button; steps arrive over the websocket, so this runs
  // again whenever htmx adds content.
  function addTableButtons(root) {
    (root.querySelectorAll ? root : document).querySelectorAll(".step-content table").forEach(function (table) {
      var before = table.previousElementSibling;
      if (before && before.getAttribute("data-copy") === "table") return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "copy-button copy-button--table";
      button.setAttribute("data-copy", "table");
      button.title = "The table's cells, tab-separated: paste them into a spreadsheet";
      button.textContent = "Copy table";
      table.parentNode.insertBefore(button, table);
    });
  }
  document.addEventListener("DOMContentLoaded", function () { addTableButtons(document); });
  document.addEventListener("htmx:load", function (event) { addTableButtons(event.target); });
  document.addEventListener("htmx:wsAfterMessage", function () { addTableButtons(document); });
})();
