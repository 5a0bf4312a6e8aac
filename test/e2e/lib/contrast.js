// The WCAG 2 contrast check the Inbox tests share (issue 27): passed to page.evaluate,
// so it runs in the page and uses nothing from this file's scope.
'use strict';
// In the page: the WCAG contrast ratio of an element's text against the first
// background behind it that is not transparent (computed colours, alpha ignored).
function contrastIn(sel) {
  const e = document.querySelector(sel);
  if (!e) return null;
  const rgb = (s) => (s.match(/[\d.]+/g) || []).map(Number);
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const fg = rgb(getComputedStyle(e).color);
  let b = e, bg = null;
  while (b) {
    const c = rgb(getComputedStyle(b).backgroundColor);
    if (c.length >= 3 && (c.length < 4 || c[3] > 0)) { bg = c; break; }
    b = b.parentElement;
  }
  if (!bg) bg = [255, 255, 255];
  const l1 = lum(fg), l2 = lum(bg);
  return { ratio: (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05), fg: getComputedStyle(e).color,
    bg: 'rgb(' + bg.slice(0, 3).join(', ') + ')', text: e.textContent.slice(0, 80) };
}

module.exports = { contrastIn };
