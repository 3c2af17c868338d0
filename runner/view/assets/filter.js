// Filters the index by status and name. Without script every row stays visible.
(function () {
  var form = document.getElementById("filters");
  if (!form) return;
  form.hidden = false;
  var q = document.getElementById("q"), st = document.getElementById("status");
  var rows = document.querySelectorAll("#scenarios tbody tr");
  var shown = document.getElementById("shown");
  // A word model=M, agent=A or name=N (its value URI-encoded) must equal the row's
  // model, agent or scenario name exactly, so the bench grid's link for oracle leaves
  // out oracle:fail=0.3; any other word is found anywhere in the name, model or file.
  function dec(v) { try { return decodeURIComponent(v); } catch (e) { return v; } }
  function apply() {
    var words = [], exact = [], want = st.value, n = 0;
    q.value.split(/\s+/).filter(Boolean).forEach(function (w) {
      var m = w.match(/^(model|agent|name)=(.*)$/);
      if (m) exact.push(["data-" + (m[1] === "name" ? "scenario" : m[1]), dec(m[2])]);
      else words.push(w.toLowerCase());
    });
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i], name = r.getAttribute("data-name");
      var ok = !want || r.getAttribute("data-status") === want;
      for (var k = 0; ok && k < exact.length; k++) ok = r.getAttribute(exact[k][0]) === exact[k][1];
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
