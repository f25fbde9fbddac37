// Saved tasks (docs/saved-tasks.md): "/" at the start of the chat's box lists them, filtered as
// typed; arrows and Enter pick one, Escape closes the list; a task's placeholders are then filled in
// a small form and the task is put in the box, to read and send. The server parsed each task into
// its parts (data-parts): this file only joins them. Text goes into the page as text, never as HTML.
// Also: forms marked data-confirm ask before they post (the saved tasks page's Delete).
(function () {
  "use strict";

  var BOX = "#chat-form textarea[name='message']";
  var dismissed = false;  // Escape closed the list: it stays closed until the box no longer starts with "/"
  var active = null;

  function el(id) { return document.getElementById(id); }
  function box() { return document.querySelector(BOX); }
  function options() { return Array.prototype.slice.call(document.querySelectorAll("#saved-task-list [role='option']")); }
  function shown() { return options().filter(function (o) { return !o.hidden; }); }
  function isOpen() { var p = el("task-picker"); return !!p && !p.hidden; }

  function setActive(option) {
    options().forEach(function (o) { o.setAttribute("aria-selected", o === option ? "true" : "false"); });
    active = option;
    var b = box();
    if (option) {
      b.setAttribute("aria-activedescendant", option.id);
      option.scrollIntoView({ block: "nearest" });
    } else {
      b.removeAttribute("aria-activedescendant");
    }
  }

  function close() {
    var picker = el("task-picker");
    if (picker) picker.hidden = true;
    setActive(null);
  }

  function update() {
    var b = box(), picker = el("task-picker");
    if (!b || !picker) return;
    var value = b.value;
    if (value.charAt(0) !== "/") dismissed = false;
    if (value.charAt(0) !== "/" || value.indexOf("\n") !== -1 || dismissed) { close(); return; }
    var query = value.slice(1).trim().toLowerCase();
    var count = 0;
    options().forEach(function (o) {
      var text = o.querySelector(".task-picker-text");
      var words = (o.getAttribute("data-name") + " " + (text ? text.textContent : "")).toLowerCase();
      var match = !query || words.indexOf(query) !== -1;  // the name and the text, not the "yours" label
      o.hidden = !match;
      if (match) count += 1;
    });
    picker.hidden = false;
    el("task-picker-empty").hidden = count > 0;
    el("task-picker-status").textContent = count ?
      count + (count === 1 ? " saved task matches" : " saved tasks match") + ": arrows to choose, Enter to use, Escape to close." :
      "No saved task matches.";
    setActive(shown()[0] || null);
  }

  function putInBox(text) {
    var b = box();
    b.value = text;
    dismissed = text.charAt(0) === "/";
    b.dispatchEvent(new Event("input", { bubbles: true }));  // the length counter follows
    b.focus();
    b.setSelectionRange(text.length, text.length);
  }

  // -- filling the placeholders -------------------------------------------------------------------
  var picked = null;

  function placeholderNames(parts) {
    var names = [];
    parts.forEach(function (part) {
      if (part[0] === "placeholder" && names.indexOf(part[1]) === -1) names.push(part[1]);
    });
    return names;
  }

  function joined(parts, values) {
    return parts.map(function (part) { return part[0] === "placeholder" ? values[part[1]] : part[1]; }).join("");
  }

  function pick(option) {
    var parts = JSON.parse(option.getAttribute("data-parts"));
    close();
    var names = placeholderNames(parts);
    if (!names.length) { putInBox(joined(parts, {})); return; }
    picked = parts;
    var form = el("task-fill"), fields = el("task-fill-fields");
    el("task-fill-name").textContent = option.getAttribute("data-name");
    fields.textContent = "";
    names.forEach(function (name, i) {
      var id = "task-fill-" + i;
      var label = document.createElement("label");
      label.setAttribute("for", id);
      label.textContent = name;
      var input = document.createElement("input");
      input.type = "text";
      input.id = id;
      input.required = true;
      input.maxLength = 500;
      input.setAttribute("data-placeholder", name);
      input.setAttribute("autocomplete", "off");
      var field = document.createElement("div");
      field.className = "task-fill-field";
      field.appendChild(label);
      field.appendChild(input);
      fields.appendChild(field);
    });
    form.hidden = false;
    fields.querySelector("input").focus();
  }

  function closeFill() {
    var form = el("task-fill");
    if (form) form.hidden = true;
    picked = null;
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.id === "task-fill") {
      event.preventDefault();
      var values = {};
      form.querySelectorAll("input[data-placeholder]").forEach(function (input) {
        values[input.getAttribute("data-placeholder")] = input.value.trim();
      });
      var parts = picked;
      closeFill();
      if (parts) putInBox(joined(parts, values));
    } else if (form.hasAttribute("data-confirm") && !window.confirm(form.getAttribute("data-confirm"))) {
      event.preventDefault();
    }
  });

  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("[data-task-fill-cancel]")) {
      closeFill();
      var b = box();
      if (b) b.focus();
      return;
    }
    var option = event.target.closest ? event.target.closest("#saved-task-list [role='option']") : null;
    if (option) pick(option);
  });
  // The box keeps the focus while an option is clicked.
  document.addEventListener("mousedown", function (event) {
    if (event.target.closest && event.target.closest("#saved-task-list")) event.preventDefault();
  });

  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches(BOX)) update();
  });
  // Leaving the box closes the list (a click on an option keeps the focus in the box, above).
  document.addEventListener("focusout", function (event) {
    if (event.target.matches && event.target.matches(BOX)) close();
  });

  // Capture phase: runs before chat.js's Enter-sends, which must not see an Enter that picks a task.
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.key === "Escape" && target.closest && target.closest("#task-fill")) {
      event.preventDefault();
      event.stopPropagation();
      closeFill();
      box().focus();
      return;
    }
    if (!target.matches || !target.matches(BOX) || !isOpen()) return;
    var list = shown(), at = list.indexOf(active);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (!list.length) return;
      event.preventDefault();
      var next = event.key === "ArrowDown" ? (at + 1) % list.length : (at <= 0 ? list.length - 1 : at - 1);
      setActive(list[next]);
    } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229 && active) {
      event.preventDefault();
      event.stopPropagation();
      pick(active);
    } else if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      dismissed = true;
      close();
    }
  }, true);
})();
