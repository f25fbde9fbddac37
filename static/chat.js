// Beyond chat: keyboard sending, attach-on-choose, panels on small screens, keep the latest in view.
// A static file because the Content-Security-Policy forbids inline script.
(function () {
  "use strict";

  // -- the viewer's time zone, for the times the server writes (beyond_site/lib/timezones.py) -------
  try {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone && /^[A-Za-z0-9_+\-\/]{1,64}$/.test(zone) && ("; " + document.cookie + ";").indexOf("; tz=" + zone + ";") === -1) {
      document.cookie = "tz=" + zone + "; path=/; max-age=31536000; SameSite=Lax";
    }
  } catch (e) { /* no Intl: times stay in UTC */ }

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

  // -- the task's length: shown as it is typed, refused before sending when over the limit ----------
  function updateCount(box) {
    var counter = document.getElementById("message-count");
    if (!counter) return;
    var max = parseInt(box.getAttribute("data-max-chars"), 10);
    var over = box.value.length > max;
    counter.textContent = box.value.length.toLocaleString("en") + " / " + max.toLocaleString("en") +
      (over ? " · " + counter.getAttribute("data-over-text") : "");
    counter.classList.toggle("is-over", over);
    box.setCustomValidity(over ? counter.getAttribute("data-over-text") : "");
  }
  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("#chat-form textarea[name='message']")) updateCount(event.target);
  });

  // -- reconnecting: soon after the server is back -------------------------------------------------
  // htmx's own "full-jitter" doubles its wait up to 64 s, so after a long outage the page came back
  // up to a minute late. Here the wait doubles from 250 ms and stops at 2 s (half of it random, so
  // that many pages do not all knock at once): the page is back within about 2 s of the server.
  // The wait counts from the last attempt's start, so the time a failing attempt itself took (a
  // busy browser's refused connection) never stretches the knocking past the cap.
  var RECONNECT_CAP_MS = 2000;
  var lastAttempt = null;
  function backoff(retries) {
    var wait = Math.min(RECONNECT_CAP_MS, 250 * Math.pow(2, Math.min(retries, 4)));
    return wait / 2 + Math.random() * wait / 2;
  }
  function reconnectDelay(retries) {
    var spent = lastAttempt === null ? 0 : performance.now() - lastAttempt;
    return Math.max(0, backoff(retries) - spent);
  }
  document.addEventListener("htmx:wsConnecting", function () { lastAttempt = performance.now(); });
  if (window.htmx) window.htmx.config.wsReconnectDelay = reconnectDelay;

  // -- a send that cannot reach the server says so, and the typed text stays ------------------------
  function notice(text, unreachable) {
    var slot = document.getElementById("notice");
    if (!slot) return;
    slot.innerHTML = "";
    var p = document.createElement("p");
    p.className = "alert";
    p.setAttribute("role", "alert");
    if (unreachable) p.setAttribute("data-unreachable", "");
    p.textContent = text;
    slot.appendChild(p);
  }
  // "Could not reach the server" is out of date as soon as the server answers again.
  function reachedAgain() {
    var stale = document.querySelector("#notice [data-unreachable]");
    if (stale) stale.parentNode.removeChild(stale);
  }
  // With no live run there is no websocket to notice the server's return: ask it (any answer will do).
  var probing = false;
  function probeUntilReached(retries) {
    if (!document.querySelector("#notice [data-unreachable]")) { probing = false; return; }
    probing = true;
    var icon = document.querySelector("link[rel='icon']");
    fetch(icon ? icon.href : "/", { method: "GET", cache: "no-store", credentials: "same-origin" })
      .then(function () { probing = false; reachedAgain(); })
      .catch(function () { setTimeout(function () { probeUntilReached(retries + 1); }, backoff(retries)); });
  }
  document.addEventListener("htmx:sendError", function (event) {
    if (event.detail.elt && event.detail.elt.id === "chat-form") {
      notice("Could not reach the server: nothing was sent, and your text is kept. Check the connection and send again.", true);
    } else {
      notice("Could not reach the server: nothing was changed. Check the connection and try again.", true);
    }
    if (!probing) setTimeout(function () { probeUntilReached(0); }, backoff(0));
  });
  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    if (status >= 500) notice("The server could not do this (error " + status + "): nothing was changed. Try again in a moment.");
    else if (status === 403) notice("Your role in this workspace does not allow this.");
  });

  // -- the live connection: say when it is lost and when it is back ---------------------------------
  var lost = 0;
  function banner(text, state) {
    var el = document.getElementById("connection-banner");
    if (!el) return;
    el.textContent = text;
    el.hidden = !text;
    el.setAttribute("data-state", state || "");
  }
  document.addEventListener("htmx:wsClose", function (event) {
    var code = event.detail && event.detail.event ? event.detail.event.code : 0;
    if (code === 1000 || code === 4403) return;  // the run finished, or this page may not follow it
    lost += 1;
    banner("Live updates lost: reconnecting… Nothing is lost; the page catches up when the connection is back.", "lost");
  });
  document.addEventListener("htmx:wsOpen", function () {
    reachedAgain();
    if (!lost) return;
    lost = 0;
    banner("Connection back: the page is up to date.", "back");
    setTimeout(function () { if (!lost) banner("", ""); }, 4000);
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt;
    if (form.id === "chat-form" && event.detail.successful) {
      var box = form.querySelector("textarea[name='message']");
      // Keep the text if the server sent nothing back (e.g. the task was refused).
      if (event.detail.xhr && event.detail.xhr.status === 200 && !event.detail.xhr.getResponseHeader("HX-Reswap")) {
        box.value = "";
        updateCount(box);
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

  // The side panels (conversations, memories) are drawers on a narrow screen: one open at a time,
  // closed by their button, Escape, or a click outside them.
  function setPanel(button, open) {
    var panel = document.getElementById(button.getAttribute("aria-controls"));
    if (!panel) return;
    panel.classList.toggle("is-open", open);
    button.setAttribute("aria-expanded", open ? "true" : "false");
  }
  function closePanels(except) {
    document.querySelectorAll("[data-toggle][aria-expanded='true']").forEach(function (button) {
      if (button !== except) setPanel(button, false);
    });
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("[data-toggle]") : null;
    if (!button) return;
    closePanels(button);
    setPanel(button, button.getAttribute("aria-expanded") !== "true");
  });
  // pointerdown, not click: Safari on iOS sends no click for a tap on plain text.
  document.addEventListener("pointerdown", function (event) {
    var target = event.target.closest ? event.target : null;
    if (target && !target.closest(".is-open") && !target.closest("[data-toggle]")) closePanels(null);
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var open = document.querySelector("[data-toggle][aria-expanded='true']");
    if (!open) return;
    closePanels(null);
    open.focus();  // focus leaves the panel it was in, now hidden
  });

  // Keep the latest in view: while the reader is at the bottom of the conversation, whatever grows
  // it (a run's live fragments, the finished article that replaces the live one, a new run) keeps
  // the bottom in view; a reader who scrolled up is left where they are. A mutation observer, not
  // the websocket's events: the finished article replaces the element that owned the socket, and
  // the events of a detached element never reach the document.
  var stick = true;

  // A new run appended to the conversation (a task sent, Run again, a redo, Regenerate, an edited
  // task) is followed from where the member clicked, however far up that was. Only the last task
  // may be edited and sent again, so the earlier tasks lose that control.
  document.addEventListener("htmx:afterSwap", function (event) {
    var messages = document.getElementById("messages");
    if (!messages || event.detail.target !== messages) return;
    var exchanges = messages.querySelectorAll(".exchange");
    for (var i = 0; i < exchanges.length - 1; i++) {
      var stale = exchanges[i].querySelector(".edit-task");
      if (stale) stale.remove();
    }
    stick = true;
    scrollToEnd(messages);
  });

  document.addEventListener("DOMContentLoaded", function () {
    var messages = document.getElementById("messages");
    if (!messages) return;
    scrollToEnd(messages);
    messages.addEventListener("scroll", function () { stick = nearBottom(messages); }, { passive: true });
    new MutationObserver(function () {
      if (stick) scrollToEnd(messages);
    }).observe(messages, { childList: true, subtree: true, characterData: true });
  });
})();
