/* page_check.js -- appended by chromium.sh to a copy of `scopeprof html`'s
 * page, after the page's own script: it works the page as a person would,
 * with real DOM events (clicks, a ctrl+wheel, a drag, typing in the find
 * box), and writes what went wrong, or "ok", into <body data-check>, which
 * chromium --dump-dom shows. */
(function () {
  'use strict';
  var bad = [];
  function check(ok, what) { if (!ok) bad.push(what); }
  function q(sel, root) { return (root || document).querySelector(sel); }
  function qa(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
  function frame(svg, name) {
    return qa('g.frame', svg).filter(function (g) { return g.querySelector('title').textContent.indexOf(name + ' (') === 0; })[0];
  }
  function fire(el, type, props) {
    var e = type === 'wheel' ? new WheelEvent(type, props) : new MouseEvent(type, props);
    el.dispatchEvent(e);
  }

  /* The table sorts by a column: calls, largest first, then smallest. */
  var table = q('table.sortable'), heads = table.tHead.rows[0].cells, calls = heads[heads.length - 1];
  var col = function (i) { return qa('tbody tr', table).map(function (r) { return +r.cells[i].getAttribute('data-v'); }); };
  calls.click();
  var c = col(heads.length - 1);
  check(c[0] === Math.max.apply(null, c), 'sort by calls: first row ' + c[0] + ', max ' + Math.max.apply(null, c));
  calls.click();
  c = col(heads.length - 1);
  check(c[0] === Math.min.apply(null, c), 'sort by calls again: first row ' + c[0]);
  heads[0].click();
  var names = qa('tbody tr', table).map(function (r) { return r.cells[0].textContent; });
  check(names.join() === names.slice().sort().join(), 'sort by name: ' + names.join());

  /* The flame graphs use the window's width, and zoom on a click. */
  var fg = q('#fg-threads svg.flamegraph'), box = q('#flames');
  check(Math.abs(+fg.getAttribute('width') - (box.clientWidth - 2)) < 1, 'flame width ' + fg.getAttribute('width') + ' in ' + box.clientWidth);
  var W = +fg.getAttribute('width'), fwd = frame(fg, 'forward'), bwd = frame(fg, 'backward'), main = frame(fg, 'main');
  check(fwd && bwd && main, 'frames forward, backward, main in the first thread graph');
  var before = +fwd.querySelector('rect').getAttribute('width');
  fire(fwd, 'click', {bubbles: true});
  var after = +fwd.querySelector('rect').getAttribute('width');
  check(Math.abs(after - (W - 20)) < 0.05, 'zoomed frame width ' + after + ', graph ' + W);
  check(before < after - 1, 'zoom widened forward: ' + before + ' -> ' + after);
  check(bwd.style.display === 'none', 'a sibling of the zoomed frame is hidden');
  check(main.style.display !== 'none' && main.classList.contains('parent'), 'a caller stays, faded');
  var reset = q('.ctl.reset', fg);
  check(reset.style.display !== 'none', 'Reset zoom shown');
  fire(reset, 'click', {bubbles: true});
  check(Math.abs(+fwd.querySelector('rect').getAttribute('width') - before) < 0.05 && bwd.style.display !== 'none',
        'reset zoom');

  /* Per thread or merged. */
  var radio = q('input[name=fgview][value=merged]');
  radio.click();
  check(!q('#fg-merged').hidden && q('#fg-threads').hidden, 'merged view shown');
  q('input[name=fgview][value=threads]').click();
  check(q('#fg-merged').hidden && !q('#fg-threads').hidden, 'per-thread view back');

  /* The timeline: ctrl+wheel zooms where the pointer is, a drag pans, a
   * double click shows it all. */
  var tl = q('svg.timeline'), slice = q('g.slice rect', tl), r0 = tl.getBoundingClientRect();
  var w0 = slice.getBoundingClientRect().width;
  fire(tl, 'wheel', {deltaY: -800, ctrlKey: true, clientX: r0.left + r0.width / 2, clientY: r0.top + 40, bubbles: true, cancelable: true});
  var t = window.spTimeline, w1 = slice.getBoundingClientRect().width;
  check(t.v1 - t.v0 < 0.5, 'ctrl+wheel zoomed in: view ' + t.v0 + '..' + t.v1);
  check(w1 > w0 * 2, 'a slice got wider on screen: ' + w0 + ' -> ' + w1);
  check(/^shown: \S+ \.\. \S+$/.test(q('#tl-view').textContent), 'the view is shown: ' + q('#tl-view').textContent);
  var v0 = t.v0;
  fire(tl, 'mousedown', {button: 0, clientX: r0.left + 600, clientY: r0.top + 40, bubbles: true});
  fire(window, 'mousemove', {clientX: r0.left + 500, clientY: r0.top + 40});
  fire(window, 'mouseup', {clientX: r0.left + 500, clientY: r0.top + 40});
  check(t.v0 > v0, 'dragging left moved the view later: ' + v0 + ' -> ' + t.v0);
  fire(tl, 'dblclick', {bubbles: true});
  check(t.v0 === 0 && t.v1 === 1 && q('#tl-view').textContent === 'shown: the whole run', 'double click shows it all');
  check(qa('.tl-axis text', tl).length >= 5, 'the axis has ticks');

  /* Find colours frames, slices and rows. */
  var find = q('#find');
  find.value = 'CONV2D';
  find.dispatchEvent(new Event('input'));
  check(qa('g.frame.hit').length > 0 && qa('g.slice.hit').length > 0 && qa('tr.hit').length === 2,
        'find: frames ' + qa('g.frame.hit').length + ', slices ' + qa('g.slice.hit').length + ', rows ' + qa('tr.hit').length);
  check(/^\d+ frame\(s\), \d+ slice\(s\)$/.test(q('#found').textContent), 'find says ' + q('#found').textContent);

  document.body.setAttribute('data-check', bad.length ? bad.join('; ') : 'ok');
})();
