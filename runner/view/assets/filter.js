// Filters the index by status and name. Without script every row stays visible.
(function () {
  var form = document.getElementById("filters");
  if (!form) return;
  form.hidden = false;
  var q = document.getElementById("q"), st = document.getElementById("status");
  var rows = document.querySelectorAll("#scenarios tbody tr");
  var shown = document.getElementById("shown");
  function apply() {
    var text = q.value.toLowerCase(), want = st.value, n = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var ok = (!want || r.getAttribute("data-status") === want) &&
        (!text || r.getAttribute("data-name").indexOf(text) >= 0);
      r.hidden = !ok;
      if (ok) n++;
    }
    shown.textContent = n + " of " + rows.length + " shown";
  }
  q.addEventListener("input", apply);
  st.addEventListener("change", apply);
  var h = location.hash.match(/^#status=(\w+)$/);
  if (h) st.value = h[1];
  // Nothing to hide on a plain load: touching 1,000 rows would only cost a style pass.
  if (st.value || q.value) apply(); else shown.textContent = rows.length + " of " + rows.length + " shown";
  document.documentElement.setAttribute("data-ready", "1");
})();
