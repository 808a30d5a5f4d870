// s11: the server sent an empty shell. Fetch the page as JSON and build it here, a moment later.
(function () {
  "use strict";
  var path = window.location.pathname + window.location.search;
  setTimeout(function () {
    fetch("/api/page?path=" + encodeURIComponent(path), { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (data) {
        if (data.redirect) { window.location.replace(data.redirect); return; }
        var doc = new DOMParser().parseFromString(data.html, "text/html");
        document.title = doc.title;
        doc.head.querySelectorAll("meta[name='nordlys:checkout'], script[type='application/json'], " +
          "script[type='application/ld+json']").forEach(function (el) {
          document.head.appendChild(document.importNode(el, true));
        });
        var nodes = Array.prototype.filter.call(doc.body.childNodes, function (n) { return n.nodeName !== "SCRIPT"; });
        document.body.replaceChildren.apply(document.body, nodes.map(function (n) { return document.importNode(n, true); }));
        var script = document.createElement("script");
        script.src = "/static/lab.js";
        document.body.appendChild(script);
      });
  }, 1000);
})();
