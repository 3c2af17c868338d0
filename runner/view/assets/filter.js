// Filters the index by status and name. Without script every row stays visible.
(function () {
  var form = document.getElementById("filters");
  if (!form) return;
  form.hidden = false;
  var q = document.getElementById("q"), st = document.getElementById("status");
  var rows = document.querySelectorAll("#scenarios tbody tr");
  var shown = document.getElementById("shown");
  function apply() {
    var words = q.value.toLowerCase().split(/\s+/).filter(Boolean), want = st.value, n = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i], name = r.getAttribute("data-name");
      var ok = !want || r.getAttribute("data-status") === want;
      for (var j = 0; ok && j < words.length; j++) ok = name.indexOf(words[j]) >= 0;
      r.hidden = !ok;
      if (ok) n++;
    }
    shown.textContent = n + " of " + rows.length + " shown";
  }
  q.addEventListener("input", apply);
  st.addEventListener("change", apply);
  // index.html#status=failed or #q=WORDS (bench.html's grid cells link with the model
  // and task) start filtered.
  var h = location.hash.match(/^#(status|q)=(.*)$/);
  if (h && h[1] === "status") st.value = h[2];
  if (h && h[1] === "q") { try { q.value = decodeURIComponent(h[2]); } catch (e) { q.value = h[2]; } }
  // Nothing to hide on a plain load: touching 1,000 rows would only cost a style pass.
  if (st.value || q.value) apply(); else shown.textContent = rows.length + " of " + rows.length + " shown";
  document.documentElement.setAttribute("data-ready", "1");
})();
