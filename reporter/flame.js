/* flame.js -- click to zoom and search in the flame graphs that flame.c
 * draws, the same code in `scopeprof flame`'s SVG file and in
 * `scopeprof html`'s page (compiled into both as a C string, reporter/rules.mk).
 *
 * A frame is a <g class="frame"> holding <title>NAME (figures)</title>, a
 * <rect> and, when it is wide enough, a <text>; the root is at the bottom.
 * The frames' places are read once from the rects as flame.c wrote them
 * (frames from x = 10 to width - 10) and laid out again for a zoom and for
 * the width the graph is shown at. Clicking a frame makes it as wide as the
 * graph (what it called widens with it, its callers show faded at full
 * width, the rest is hidden); clicking the root or "Reset zoom" undoes it.
 * window.spFlames lists the graphs, for the page's script (report.js). */
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg', LEFT = 10, CHAR_W = 7.2, EPS = 0.02;

  /* name cut to what w px hold: "name", "nam..", or "" */
  function fit(name, w) {
    var n = Math.floor((w - 6) / CHAR_W);
    if (n < 3) return '';
    return name.length <= n ? name : name.slice(0, n - 2) + '..';
  }

  function Flame(svg) {
    var self = this, vb = svg.viewBox.baseVal, gs = svg.querySelectorAll('g.frame');
    this.svg = svg;
    this.w0 = vb.width;
    this.h = vb.height;
    this.width = this.w0;
    this.zoomed = null;
    this.frames = [];
    for (var i = 0; i < gs.length; i++) {
      var g = gs[i], r = g.querySelector('rect'), t = g.querySelector('title').textContent;
      var f = {
        g: g, rect: r, text: g.querySelector('text'), name: t.slice(0, t.lastIndexOf(' (')),
        x: +r.getAttribute('x'), y: +r.getAttribute('y'), w: +r.getAttribute('width')
      };
      if (!f.text) { /* frames too narrow for a label get one when zoomed */
        f.text = document.createElementNS(NS, 'text');
        f.text.setAttribute('y', f.y + (+r.getAttribute('height')) - 3);
        g.appendChild(f.text);
      }
      g.addEventListener('click', this.zoom.bind(this, f));
      this.frames.push(f);
    }
    this.root = this.frames.length ? this.frames[0] : null; /* flame.c draws the root first */
    this.reset = svg.querySelector('.ctl.reset');
    if (this.reset) this.reset.addEventListener('click', function () { self.zoom(null); });
    var search = svg.querySelector('.ctl.search');
    if (search) search.addEventListener('click', function () { self.ask(); });
    this.matched = svg.querySelector('.matched');
  }

  /* Zoom into frame f (null, or the root: the whole graph). */
  Flame.prototype.zoom = function (f) {
    this.zoomed = f && f !== this.root ? f : null;
    this.layout(this.width);
  };

  /* Lay the frames out for a graph `width` px wide. */
  Flame.prototype.layout = function (width) {
    var z = this.zoomed, full = width - 2 * LEFT;
    var x0 = z ? z.x : LEFT, s = full / (z ? z.w : this.w0 - 2 * LEFT);
    this.width = width;
    this.svg.setAttribute('width', width);
    this.svg.setAttribute('viewBox', '0 0 ' + width + ' ' + this.h);
    if (this.reset) this.reset.style.display = z ? '' : 'none';
    for (var i = 0; i < this.frames.length; i++) {
      var f = this.frames[i], x, w, show = true, parent = false;
      if (z && f.y > z.y + EPS) { /* a level below: its callers stay, at full width */
        show = f.x <= z.x + EPS && f.x + f.w >= z.x + z.w - EPS;
        x = LEFT;
        w = full;
        parent = true;
      } else {
        show = !z || (f.x >= z.x - EPS && f.x + f.w <= z.x + z.w + EPS);
        x = LEFT + (f.x - x0) * s;
        w = f.w * s;
      }
      f.g.style.display = show ? '' : 'none';
      f.g.classList.toggle('parent', parent);
      if (!show) continue;
      f.rect.setAttribute('x', x.toFixed(2));
      f.rect.setAttribute('width', w.toFixed(2));
      f.text.setAttribute('x', (x + 3).toFixed(2));
      f.text.textContent = fit(f.name, w);
    }
  };

  /* Colour the frames whose name holds q (any case); returns the share of
   * the graph's time they cover (nested matches counted once). */
  Flame.prototype.search = function (q) {
    var hits = [], lq = q.toLowerCase();
    for (var i = 0; i < this.frames.length; i++) {
      var f = this.frames[i], hit = q !== '' && f.name.toLowerCase().indexOf(lq) >= 0;
      f.g.classList.toggle('hit', hit);
      if (hit) hits.push([f.x, f.x + f.w]);
    }
    hits.sort(function (a, b) { return a[0] - b[0]; });
    var covered = 0, end = -1;
    for (var k = 0; k < hits.length; k++) {
      var a = Math.max(hits[k][0], end);
      if (hits[k][1] > a) covered += hits[k][1] - a;
      end = Math.max(end, hits[k][1]);
    }
    var share = this.root ? covered / this.root.w : 0;
    if (this.matched) this.matched.textContent = q ? 'Matched: ' + (100 * share).toFixed(1) + '%' : '';
    return {frames: hits.length, share: share};
  };

  Flame.prototype.ask = function () {
    var q = window.prompt('Search frames whose name holds:', '');
    if (q !== null) this.search(q);
  };

  var svgs = document.querySelectorAll('svg.flamegraph'), flames = [];
  for (var i = 0; i < svgs.length; i++) flames.push(new Flame(svgs[i]));
  window.spFlames = flames;
  /* A graph on its own (the SVG file): Ctrl-F searches, Escape unzooms. */
  if (document.documentElement.namespaceURI === NS && flames.length === 1) {
    document.addEventListener('keydown', function (e) {
      if ((e.ctrlKey || e.metaKey) && e.key === 'f') {
        e.preventDefault();
        flames[0].ask();
      } else if (e.key === 'Escape') {
        flames[0].zoom(null);
      }
    });
  }
})();
