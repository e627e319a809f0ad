// agbom review page: the only script. Progressive enhancement: a filter box narrows the rows
// of its table as you type (the form still filters on the server without it), and the
// "Approve, reviewed elsewhere" button stays disabled until its box is ticked (the server
// refuses it unticked all the same). No network, no eval, no HTML built from strings.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("input[data-filter-rows]").forEach(function (input) {
    var body = document.getElementById(input.getAttribute("data-filter-rows"));
    if (!body) { return; }
    input.addEventListener("input", function () {
      var needle = input.value.toLowerCase();
      body.querySelectorAll("tr").forEach(function (row) {
        var text = row.textContent.toLowerCase();
        row.classList.toggle("filtered-out", needle !== "" && text.indexOf(needle) < 0);
      });
    });
  });
  var box = document.getElementById("reviewed-elsewhere");
  var approve = document.getElementById("approve-reviewed-elsewhere");
  if (box && approve) {
    var sync = function () { approve.disabled = !box.checked; };
    box.addEventListener("change", sync);
    sync();
  }
});
