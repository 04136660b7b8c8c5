// tablekit ui: the little JavaScript the pages use. No framework, no build.
"use strict";
(function () {
  var csrf = document.body.dataset.csrf;

  // Rows grid: "show all" of a truncated value fetches the whole value.
  document.addEventListener("click", function (ev) {
    var a = ev.target.closest && ev.target.closest("a.more");
    if (!a) return;
    ev.preventDefault();
    fetch(a.href, { credentials: "same-origin" }).then(function (r) {
      return r.text().then(function (t) { if (!r.ok) throw new Error(t); return t; });
    }).then(function (t) {
      var td = a.parentNode;
      td.textContent = t; // text, never HTML
      td.classList.add("full");
    }).catch(function (e) { a.textContent = "(" + e.message + ")"; });
  });

  // Feed page: a live tail over server-sent events, paused and resumed
  // from the position of the last record shown.
  var tail = document.getElementById("tail");
  if (tail) {
    var es = null, count = 0, pos = {}, shown = 0;
    var body = document.querySelector("#records tbody");
    var state = document.getElementById("tailstate");
    var startBtn = document.getElementById("start"), pauseBtn = document.getElementById("pause");
    var posEl = document.getElementById("position");
    var pending = [], timer = null;
    function keyText(k) {
      return Object.keys(k).map(function (n) {
        var v = k[n], t = Object.keys(v)[0];
        return n + "=" + (t === "s" ? v.s : t + ":" + JSON.stringify(v[t]));
      }).join(",");
    }
    function changeText(c) {
      if (c.op === "put") {
        var t = Object.keys(c.value)[0];
        return c.column + "=" + (t === "s" ? JSON.stringify(c.value.s) : t + ":" + JSON.stringify(c.value[t])) + "@" + c.version;
      }
      if (c.op === "delete_version") return "delete " + c.column + "@" + c.version;
      return "delete " + c.column;
    }
    function drain() {
      timer = null;
      var frag = document.createDocumentFragment();
      pending.forEach(function (r) {
        var tr = document.createElement("tr");
        [r.commit_time, r.kind, keyText(r.key), (r.changes || []).map(changeText).join("  ")].forEach(function (s) {
          var td = document.createElement("td");
          td.textContent = s;
          tr.appendChild(td);
        });
        frag.insertBefore(tr, frag.firstChild);
      });
      pending = [];
      body.insertBefore(frag, body.firstChild);
      while (body.rows.length > 500) body.deleteRow(body.rows.length - 1);
      document.getElementById("count").textContent = count;
      posEl.textContent = JSON.stringify(pos);
    }
    function start(from) {
      if (es) es.close();
      es = new EventSource(tail.dataset.events + "?from=" + encodeURIComponent(from));
      state.textContent = "connecting";
      es.addEventListener("position", function (ev) {
        pos = JSON.parse(ev.data);
        posEl.textContent = JSON.stringify(pos);
        state.textContent = "live";
        tail.dataset.live = "1";
      });
      es.addEventListener("rec", function (ev) {
        var r = JSON.parse(ev.data);
        pos[r.shard] = r.checkpoint;
        count++;
        pending.push(r);
        if (!timer) timer = setTimeout(drain, 100);
      });
      es.addEventListener("failed", function (ev) {
        state.textContent = "failed: " + JSON.parse(ev.data);
        es.close(); es = null;
        startBtn.disabled = false; pauseBtn.disabled = true;
      });
      startBtn.disabled = true; pauseBtn.disabled = false;
      pauseBtn.textContent = "Pause";
    }
    startBtn.addEventListener("click", function () {
      var from = document.querySelector("input[name=from]:checked").value;
      if (from === "checkpoint") from = document.getElementById("checkpoint").value;
      start(from);
    });
    pauseBtn.addEventListener("click", function () {
      if (es) {
        es.close(); es = null;
        if (timer) { clearTimeout(timer); drain(); }
        state.textContent = "paused";
        tail.dataset.live = "";
        pauseBtn.textContent = "Resume";
      } else {
        start(JSON.stringify(pos));
      }
    });
  }

  // Import page: poll the job for the progress bar.
  var job = document.getElementById("job");
  if (job) {
    var poll = function () {
      fetch(job.dataset.status, { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (s) {
        var bar = document.getElementById("bar");
        bar.max = Math.max(s.total, 1);
        bar.value = s.done && !s.error ? bar.max : s.rows;
        document.getElementById("jobtext").textContent = s.done
          ? (s.error ? "failed after " + s.rows + " rows" : "done: " + s.rows + " rows written")
          : s.rows + " of about " + s.total + " lines written";
        document.getElementById("jobout").textContent = (s.output || "") + (s.error ? "\n" + s.error : "");
        job.dataset.done = s.done ? (s.error ? "failed" : "ok") : "";
        if (!s.done) setTimeout(poll, 250);
      });
    };
    poll();
  }
  void csrf;
})();
