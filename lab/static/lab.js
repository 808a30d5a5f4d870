// NORDLYS page behaviour for every station. Each part wakes only when its station's markup is present,
// so s01 loads the same file and nothing in it acts. Event delegation lets s11 run it after building a page.
(function () {
  "use strict";
  if (window.__nordlys) return;
  window.__nordlys = true;

  // s02: the "Settings" button shows the second layer of the consent dialog.
  document.addEventListener("click", function (event) {
    var settings = event.target.closest("[data-consent-settings]");
    if (!settings) return;
    document.querySelector(".consent-first").hidden = true;
    document.querySelector(".consent-settings").hidden = false;
  });

  // s03: the discount dialog opens after 1.5 s; the unnamed x button or Escape closes it for this page view.
  var discount = document.getElementById("discount");
  if (discount) {
    setTimeout(function () { discount.hidden = false; }, 1500);
    document.addEventListener("click", function (event) {
      if (event.target.closest("[data-close-discount]")) discount.hidden = true;
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape") discount.hidden = true;
    });
  }

  // s04: a tile learns its product address only when clicked.
  document.addEventListener("click", function (event) {
    var tile = event.target.closest("div.tile[data-tile]");
    if (!tile) return;
    fetch("/api/tiles/" + tile.dataset.tile).then(function (r) { return r.json(); })
      .then(function (data) { window.location.assign(data.url); });
  });

  // s06: the decorative list sets the hidden select; the select's change updates the page.
  document.addEventListener("click", function (event) {
    var opener = event.target.closest("[data-fake-select]");
    var list = document.querySelector(".fake-options");
    if (opener && list) { list.hidden = !list.hidden; return; }
    var item = event.target.closest(".fake-options li");
    if (!item) return;
    var select = document.querySelector("select[name=size]");
    select.value = item.dataset.value;
    select.dispatchEvent(new Event("change", { bubbles: true }));
    list.hidden = true;
  });
  document.addEventListener("change", function (event) {
    var select = event.target.closest("select[name=size]");
    if (!select) return;
    var option = select.selectedOptions[0];
    var chosen = option && option.value && !option.disabled;
    document.querySelector("[data-fake-select]").textContent = chosen ? option.textContent + " ▾" : "Choose size ▾";
    document.querySelectorAll("#buy-form .buy-buttons button").forEach(function (b) { b.disabled = !chosen; });
    var hint = document.querySelector("#buy-form .hint");
    if (hint) hint.hidden = !!chosen;
  });

  // s09: the way to the checkout opens only when the terms box is ticked.
  document.addEventListener("change", function (event) {
    var terms = event.target.closest("[data-terms]");
    if (!terms) return;
    document.querySelector("[data-needs-terms]").disabled = !terms.checked;
  });

  // s14: pickup points exist only as pins drawn on the canvas; ids match ordering.PICKUP_POINTS.
  var PINS = [
    { id: "pp-7c1d", x: 92, y: 70 }, { id: "pp-2a9f", x: 330, y: 60 },
    { id: "pp-e43b", x: 210, y: 190 }, { id: "pp-51f0", x: 405, y: 220 }
  ];
  function drawMap(canvas, chosen) {
    var c = canvas.getContext("2d");
    c.fillStyle = "#e8efe4"; c.fillRect(0, 0, canvas.width, canvas.height);
    c.strokeStyle = "#ffffff"; c.lineWidth = 10;
    [[0, 120, 480, 140], [150, 0, 180, 280], [0, 250, 480, 200], [300, 0, 360, 280]].forEach(function (r) {
      c.beginPath(); c.moveTo(r[0], r[1]); c.lineTo(r[2], r[3]); c.stroke();
    });
    c.fillStyle = "#b9d3e8"; c.fillRect(20, 180, 90, 70);
    PINS.forEach(function (pin) {
      c.beginPath(); c.arc(pin.x, pin.y, 10, 0, 2 * Math.PI);
      c.fillStyle = pin.id === chosen ? "#1e4d6b" : "#c0392b"; c.fill();
    });
  }
  var map = document.getElementById("pickup-map");
  if (map) {
    drawMap(map, null);
    map.addEventListener("click", function (event) {
      var box = map.getBoundingClientRect();
      var x = (event.clientX - box.left) * map.width / box.width;
      var y = (event.clientY - box.top) * map.height / box.height;
      var hit = PINS.find(function (pin) { return Math.hypot(pin.x - x, pin.y - y) <= 16; });
      if (!hit) return;
      document.querySelector(".to-checkout input[name=point]").value = hit.id;
      document.querySelector("[data-map-state]").textContent = "Pickup point chosen.";
      drawMap(map, hit.id);
    });
  }
})();
