// agbom review page: the only script. Progressive enhancement: a filter box narrows the rows
// of its table as you type (the form still filters on the server without it). No network,
// no eval, no HTML built from strings.
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
});
