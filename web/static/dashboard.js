// Tether dashboard: live panels and relative times. Every page works
// without this script; it only keeps what is on screen current.
(function () {
  "use strict";

  // The server's clock at render time, so relative times agree with it
  // even when this machine's clock is off.
  var skew = Number(document.body.dataset.now || Date.now()) - Date.now();
  var serverNow = function () { return Date.now() + skew; };

  function roughly(ms) {
    var s = Math.floor(ms / 1000);
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " min";
    if (s < 48 * 3600) return Math.floor(s / 3600) + " h";
    return Math.floor(s / 86400) + " d";
  }

  function relative(t) {
    var d = serverNow() - t;
    if (d > -1000 && d < 1000) return "just now";
    return d < 0 ? "in " + roughly(-d) : roughly(d) + " ago";
  }

  function tick() {
    var els = document.querySelectorAll("time[data-rel]");
    for (var i = 0; i < els.length; i++) {
      var t = Date.parse(els[i].dateTime);
      if (!isNaN(t)) els[i].textContent = relative(t);
    }
  }
  setInterval(tick, 1000);

  // "Select all" boxes, shown only when this script runs.
  function wireSelectAll(root) {
    var boxes = root.querySelectorAll("input[data-select-all]");
    for (var i = 0; i < boxes.length; i++) {
      var all = boxes[i];
      all.hidden = false;
      all.addEventListener("change", function (ev) {
        var form = ev.target.dataset.selectAll;
        var items = document.querySelectorAll('input[type="checkbox"][form="' + form + '"]');
        for (var j = 0; j < items.length; j++) items[j].checked = ev.target.checked;
      });
    }
  }
  wireSelectAll(document);

  // Live panels: /events names the topics that changed; each panel lists
  // the topics it follows and is fetched again, alone, as ?fragment=id.
  if (!window.EventSource || !window.fetch) return;
  var live = document.getElementById("live");
  var state = {}; // panel id -> "busy" | "again"

  function checkedIn(el) {
    var out = {};
    var boxes = el.querySelectorAll('input[type="checkbox"][name="id"]:checked');
    for (var i = 0; i < boxes.length; i++) out[boxes[i].value] = true;
    return out;
  }

  function swap(old, html) {
    var tpl = document.createElement("template");
    tpl.innerHTML = html.trim();
    var next = tpl.content.firstElementChild;
    if (!next || next.id !== old.id) return;
    var keep = checkedIn(old);
    var boxes = next.querySelectorAll('input[type="checkbox"][name="id"]');
    for (var i = 0; i < boxes.length; i++) if (keep[boxes[i].value]) boxes[i].checked = true;
    old.replaceWith(next);
    wireSelectAll(next);
    tick();
  }

  function refresh(id) {
    if (state[id]) { state[id] = "again"; return; }
    state[id] = "busy";
    var url = new URL(window.location.href);
    url.hash = "";
    url.searchParams.set("fragment", id);
    fetch(url, { headers: { "Accept": "text/html" }, credentials: "same-origin" })
      .then(function (res) { return res.ok ? res.text() : null; })
      .then(function (html) {
        var el = document.getElementById(id);
        if (html && el) swap(el, html);
      })
      .catch(function () {})
      .then(function () {
        var again = state[id] === "again";
        delete state[id];
        if (again) refresh(id);
      });
  }

  function refreshFor(topics) {
    var panels = document.querySelectorAll("[data-panel]");
    for (var i = 0; i < panels.length; i++) {
      var follows = (panels[i].dataset.topics || "").split(" ");
      for (var j = 0; j < follows.length; j++) {
        if (topics.indexOf(follows[j]) >= 0) { refresh(panels[i].id); break; }
      }
    }
  }

  var opened = false;
  var es = new EventSource("/events");
  es.addEventListener("open", function () {
    if (live) { live.hidden = false; live.dataset.state = "on"; live.textContent = "live"; }
    // After a reconnect, changes may have been missed: refresh everything.
    if (opened) refreshFor(["jobs", "queues", "workers"]);
    opened = true;
  });
  es.addEventListener("error", function () {
    if (live) { live.dataset.state = "off"; live.textContent = "reconnecting"; }
  });
  es.addEventListener("change", function (ev) {
    refreshFor(String(ev.data).split(" "));
  });
})();
