/* svg_check.js -- appended by chromium.sh to a copy of `scopeprof flame`'s
 * SVG file: a click zooms into a frame, Search colours the frames that
 * match and says their share; the result goes into the root's data-check. */
(function () {
  'use strict';
  var bad = [], svg = document.documentElement, f = window.spFlames && window.spFlames[0];
  function check(ok, what) { if (!ok) bad.push(what); }
  check(f, 'flame.js ran');
  var fwd = Array.prototype.filter.call(svg.querySelectorAll('g.frame'), function (g) {
    return g.querySelector('title').textContent.indexOf('forward (') === 0;
  })[0];
  fwd.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  check(Math.abs(+fwd.querySelector('rect').getAttribute('width') - 1180) < 0.05, 'zoomed: ' + fwd.querySelector('rect').getAttribute('width'));
  var res = f.search('conv');
  check(res.frames > 0 && svg.querySelectorAll('g.frame.hit').length === res.frames, 'search: ' + res.frames + ' frames');
  check(/^Matched: \d+\.\d%$/.test(svg.querySelector('.matched').textContent) && res.share > 0 && res.share < 1,
        'matched: ' + svg.querySelector('.matched').textContent);
  svg.setAttribute('data-check', bad.length ? bad.join('; ') : 'ok');
})();
