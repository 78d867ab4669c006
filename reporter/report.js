/* report.js -- the script of `scopeprof html`'s page (html.c), after
 * flame.js: sortable tables, the find box, the per-thread / merged flame
 * graph switch, the timeline's zoom and pan, and a layout that follows the
 * window's width. Everything it needs is in the page: it loads nothing.
 * When it has run, <body data-ready="..."> counts what the page holds (the
 * headless check, tests/output/chromium.sh, reads it). */
(function () {
  'use strict';
  var LEFT = 10;

  function all(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
  function nameOf(title) { return title.slice(0, title.lastIndexOf(' (')); }

  /* ---- Tables: a click on a column's head sorts by it, again reverses. */
  function sortable(table) {
    var heads = table.tHead.rows[0].cells, body = table.tBodies[0];
    var rows = all('tr', body);
    rows.forEach(function (r, i) { r.spIndex = i; });
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener('click', function () {
        var text = th.getAttribute('data-type') === 'text';
        var dir = th.getAttribute('aria-sort') === (text ? 'ascending' : 'descending') ? -1 : 1;
        if (!text) dir = -dir; /* numbers: largest first on the first click */
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
        var key = function (r) {
          var c = r.cells[col];
          return text ? c.textContent : +c.getAttribute('data-v');
        };
        rows.sort(function (a, b) {
          var x = key(a), y = key(b);
          return x < y ? -dir : x > y ? dir : a.spIndex - b.spIndex;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  /* ---- Timeline: the slices are drawn once (html.c) in a group that a
   * transform stretches; labels and the time axis are redrawn for each view.
   * The view is the part v0..v1 (0..1) of the whole time span. */
  function fmtTime(ns) {
    var a = Math.abs(ns), u = a >= 1e9 ? [1e9, 's'] : a >= 1e6 ? [1e6, 'ms'] : a >= 1e3 ? [1e3, 'us'] : [1, 'ns'];
    return +(ns / u[0]).toFixed(3) + u[1];
  }

  function Timeline(svg) {
    var self = this;
    this.svg = svg;
    this.span = +svg.getAttribute('data-span') || 1;
    this.w0 = svg.viewBox.baseVal.width;
    this.h = svg.viewBox.baseVal.height;
    this.axisH = +svg.getAttribute('data-axis');
    this.body = svg.querySelector('.tl-body');
    this.labels = svg.querySelector('.tl-labels');
    this.axis = svg.querySelector('.tl-axis');
    this.items = all('g.slice, g.step', this.body).map(function (g) {
      var r = g.querySelector('rect');
      return {g: g, x: +r.getAttribute('x'), w: +r.getAttribute('width'), y: +r.getAttribute('y'),
              h: +r.getAttribute('height'), name: nameOf(g.querySelector('title').textContent)};
    });
    this.v0 = 0;
    this.v1 = 1;
    this.width = this.w0;
    this.mouseX = null;
    svg.addEventListener('wheel', function (e) {
      var x = self.screenX(e);
      if (e.ctrlKey || e.metaKey) { /* (a pinch on a touchpad comes as ctrl+wheel) */
        e.preventDefault();
        self.zoomAt(x, Math.pow(1.002, e.deltaY));
      } else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        e.preventDefault();
        self.pan((e.shiftKey ? e.deltaY : e.deltaX) / (self.width - 2 * LEFT));
      }
    }, {passive: false});
    svg.addEventListener('mousedown', function (e) {
      if (e.button !== 0) return;
      var x0 = e.clientX;
      e.preventDefault();
      var move = function (m) {
        self.pan((x0 - m.clientX) / (self.width - 2 * LEFT));
        x0 = m.clientX;
      };
      var up = function () {
        window.removeEventListener('mousemove', move);
        window.removeEventListener('mouseup', up);
      };
      window.addEventListener('mousemove', move);
      window.addEventListener('mouseup', up);
    });
    svg.addEventListener('mousemove', function (e) { self.mouseX = self.screenX(e); });
    svg.addEventListener('mouseleave', function () { self.mouseX = null; });
    svg.addEventListener('dblclick', function () { self.view(0, 1); });
    /* Perfetto's keys while the pointer is over the timeline: W/S zoom, A/D pan. */
    document.addEventListener('keydown', function (e) {
      if (self.mouseX === null || e.ctrlKey || e.metaKey || e.altKey) return;
      var k = e.key.toLowerCase();
      if (k === 'w' || k === 's') self.zoomAt(self.mouseX, k === 'w' ? 0.8 : 1.25);
      else if (k === 'a' || k === 'd') self.pan(k === 'a' ? -0.1 : 0.1);
    });
  }

  /* The pointer's x in the timeline's own units (its viewBox is its width). */
  Timeline.prototype.screenX = function (e) {
    var r = this.svg.getBoundingClientRect();
    return (e.clientX - r.left) * this.width / (r.width || 1);
  };

  Timeline.prototype.view = function (v0, v1) {
    var w = Math.min(1, Math.max(v1 - v0, 20 / this.span)); /* at most 20 ns across */
    v0 = Math.min(Math.max(v0, 0), 1 - w);
    this.v0 = v0;
    this.v1 = v0 + w;
    this.layout(this.width);
  };

  /* Zoom by `factor` (< 1: in) keeping the time under screen x in place. */
  Timeline.prototype.zoomAt = function (x, factor) {
    var inner = this.width - 2 * LEFT, at = Math.min(Math.max((x - LEFT) / inner, 0), 1);
    var t = this.v0 + at * (this.v1 - this.v0), w = (this.v1 - this.v0) * factor;
    this.view(t - at * w, t - at * w + w);
  };

  /* Move by `by` of the view's width (> 0: later). */
  Timeline.prototype.pan = function (by) {
    var d = by * (this.v1 - this.v0);
    this.view(this.v0 + d, this.v1 + d);
  };

  Timeline.prototype.layout = function (width) {
    var svg = this.svg, inner = width - 2 * LEFT, vw = this.v1 - this.v0;
    var k = inner / ((this.w0 - 2 * LEFT) * vw), a = LEFT - LEFT * k - this.v0 * inner / vw;
    this.width = width;
    svg.setAttribute('width', width);
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + this.h);
    this.body.setAttribute('transform', 'translate(' + a.toFixed(3) + ',0) scale(' + k.toPrecision(8) + ',1)');
    /* Labels where a slice is wide enough on screen (the part in view). */
    var NS = svg.namespaceURI, frag = document.createDocumentFragment(), n = 0;
    for (var i = 0; i < this.items.length && n < 4000; i++) {
      var it = this.items[i], l = Math.max(it.x * k + a, LEFT), r = Math.min((it.x + it.w) * k + a, width - LEFT);
      var fit = Math.floor((r - l - 4) / 7.2);
      if (fit < 3) continue;
      var t = document.createElementNS(NS, 'text');
      t.setAttribute('x', (l + 2).toFixed(1));
      t.setAttribute('y', it.y + it.h - 3);
      t.textContent = it.name.length <= fit ? it.name : it.name.slice(0, fit - 2) + '..';
      frag.appendChild(t);
      n++;
    }
    this.labels.textContent = '';
    this.labels.appendChild(frag);
    /* The axis: about ten ticks at round times since the first slice. */
    var t0 = this.v0 * this.span, t1 = this.v1 * this.span, step = Math.pow(10, Math.floor(Math.log10((t1 - t0) / 10)));
    if ((t1 - t0) / step > 50) step *= 5;
    else if ((t1 - t0) / step > 20) step *= 2;
    this.axis.textContent = '';
    for (var tt = Math.ceil(t0 / step) * step; tt <= t1; tt += step) {
      var x = LEFT + (tt - t0) / (t1 - t0) * inner, line = document.createElementNS(NS, 'line');
      line.setAttribute('class', 'tick');
      line.setAttribute('x1', x.toFixed(1));
      line.setAttribute('x2', x.toFixed(1));
      line.setAttribute('y1', 18);
      line.setAttribute('y2', this.h);
      var lab = document.createElementNS(NS, 'text');
      lab.setAttribute('class', 'axis');
      lab.setAttribute('x', (x + 2).toFixed(1));
      lab.setAttribute('y', 14);
      lab.textContent = fmtTime(Math.round(tt));
      this.axis.appendChild(line);
      this.axis.appendChild(lab);
    }
    var shown = document.getElementById('tl-view');
    if (shown) shown.textContent = 'shown: ' + (vw < 1 ? fmtTime(Math.round(t0)) + ' .. ' + fmtTime(Math.round(t1)) : 'the whole run');
  };

  /* ---- The page */
  var flames = window.spFlames || [];
  all('table.sortable').forEach(sortable);
  var tlSvg = document.querySelector('svg.timeline'), tl = tlSvg ? new Timeline(tlSvg) : null;
  window.spTimeline = tl;

  var threads = document.getElementById('fg-threads'), merged = document.getElementById('fg-merged');
  all('input[name=fgview]').forEach(function (r) {
    r.addEventListener('change', function () {
      if (threads) threads.hidden = r.value !== 'threads';
      if (merged) merged.hidden = r.value !== 'merged';
    });
  });

  function layout() {
    var fl = document.getElementById('flames'), box = document.querySelector('.tlbox');
    if (fl) flames.forEach(function (f) { f.layout(Math.max(fl.clientWidth - 2, 400)); });
    if (tl && box) tl.layout(Math.max(box.clientWidth - 2, 400));
  }
  var pending = false;
  window.addEventListener('resize', function () {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; layout(); });
  });
  layout();

  [['tl-in', 0.5], ['tl-out', 2]].forEach(function (b) {
    var e = document.getElementById(b[0]);
    if (e && tl) e.addEventListener('click', function () { tl.zoomAt(tl.width / 2, b[1]); });
  });
  var reset = document.getElementById('tl-reset');
  if (reset && tl) reset.addEventListener('click', function () { tl.view(0, 1); });

  /* Find: frames, slices and table rows whose name holds the text (any case). */
  var box = document.getElementById('find'), found = document.getElementById('found');
  if (box) box.addEventListener('input', function () {
    var q = box.value, lq = q.toLowerCase(), nf = 0, ns = 0;
    flames.forEach(function (f) { nf += f.search(q).frames; });
    (tl ? tl.items : []).forEach(function (it) {
      var hit = q !== '' && it.name.toLowerCase().indexOf(lq) >= 0;
      it.g.classList.toggle('hit', hit);
      ns += hit;
    });
    all('table.sortable tbody tr').forEach(function (r) {
      r.classList.toggle('hit', q !== '' && r.cells[0].textContent.toLowerCase().indexOf(lq) >= 0);
    });
    found.textContent = q ? nf + ' frame(s), ' + ns + ' slice(s)' : '';
  });

  document.body.setAttribute('data-ready',
    'rows=' + all('table.sortable tbody tr').length +
    ' frames=' + all('#fg-merged g.frame').length +
    ' threads=' + all('#fg-threads svg.flamegraph').length +
    ' slices=' + all('.timeline g.slice').length +
    ' steps=' + all('.timeline g.step').length +
    ' counters=' + all('.timeline path.counter').length);
})();
