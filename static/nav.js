// The top bar's Menu (templates/workspaces/_nav.html, a <details>) closes as a menu does: on a click
// outside it and on Escape, which gives the focus back to its button. A static file because the
// Content-Security-Policy forbids inline script.
(function () {
  "use strict";

  function openMenus() {
    return document.querySelectorAll("details.topbar-menu[open]");
  }

  document.addEventListener("click", function (event) {
    openMenus().forEach(function (menu) {
      if (!menu.contains(event.target)) menu.removeAttribute("open");
    });
  });

  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    openMenus().forEach(function (menu) {
      menu.removeAttribute("open");
      menu.querySelector("summary").focus();
    });
  });
})();
