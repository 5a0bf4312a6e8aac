#!/usr/bin/env node
// The Inbox's review page of a finished run (issue 27), in Debian's Chromium through
// playwright-core. usage: node inbox-review.js CONFIG.json
// CONFIG: { nodeModules, cwctl, run, repo, approval, hport, shots, htmlPath }
// See inbox_review.test.sh for what is checked. Prints "ok N - ..." per check and
// exits 1 on the first failure.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const { chromium } = require(path.join(cfg.nodeModules, 'playwright-core'));
const DEADLINE = (s) => ({ timeout: s * 1000 });
let n = 0;
function ok(what) { n++; console.log(`ok ${n} - ${what}`); }
function must(cond, what) { if (!cond) throw new Error(what); ok(what); }
function git(...args) { return execFileSync('git', ['-C', cfg.repo, ...args], { encoding: 'utf8' }).trim(); }

const { contrastIn } = require('./contrast.js');

async function noOverflow(page, what) {
  const o = await page.evaluate(() => ({ sw: document.scrollingElement.scrollWidth, w: window.innerWidth }));
  must(o.sw <= o.w, `${what}: no horizontal overflow (scrollWidth ${o.sw} <= innerWidth ${o.w})`);
  // The 600-character line scrolls inside its own block.
  const b = await page.evaluate(() => {
    const pre = [...document.querySelectorAll('#run-diff .dfile')].find((s) => s.dataset.path === 'long.txt')
      .querySelector('pre');
    return { sw: pre.scrollWidth, cw: pre.clientWidth, right: pre.getBoundingClientRect().right };
  });
  must(b.sw > b.cw && b.right <= o.w, `${what}: the long line scrolls inside its own block (${b.sw} > ${b.cw})`);
}

async function main() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'cw-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    const dialogs = [];
    let answer = 'dismiss';
    page.on('dialog', (d) => { dialogs.push(d.message()); if (answer === 'accept') d.accept(); else d.dismiss(); });
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(execFileSync(cfg.cwctl, ['inbox'], { encoding: 'utf8' }).trim());
    const origin = new URL(page.url()).origin;
    await page.evaluate((id) => { location.hash = '#run/' + id; }, cfg.run);

    // 1. While the run waits on its approval: the state line says it runs, readably.
    // (A command run has no transcript of its own, so the transcript's "waiting" line is
    // checked on a real Claude Code run, in inbox-browser.js.)
    await page.locator('#run-state[data-state="live"]').waitFor(DEADLINE(30));
    const lc = await page.evaluate(contrastIn, '#run-state');
    must(lc.ratio >= 4.5 && !(await page.locator('#run-merge').isVisible()),
      `a live run: "${lc.text}", WCAG AA ${lc.ratio.toFixed(2)}:1, no Merge button`);
    execFileSync(cfg.cwctl, ['deny', cfg.approval], { encoding: 'utf8' });

    // 2. Finished: the state line says it waits for review, readably.
    const st = page.locator('#run-state[data-state="waiting"]');
    await st.waitFor(DEADLINE(60));
    must(/^Waiting for your review/.test(await st.innerText()), `the state line: "${await st.innerText()}"`);
    const sc = await page.evaluate(contrastIn, '#run-state');
    must(sc.ratio >= 4.5, `the state line passes WCAG AA: ${sc.ratio.toFixed(2)}:1 (${sc.fg} on ${sc.bg})`);

    // 3. The summary, as sentences.
    await page.locator('#run-facts dt', { hasText: 'Network hosts' }).waitFor(DEADLINE(30));
    const facts = await page.evaluate(() => {
      const o = {};
      const dts = document.querySelectorAll('#run-facts dt');
      for (const dt of dts) o[dt.textContent] = dt.nextElementSibling.innerText;
      return o;
    });
    must(facts.Asked && facts.Asked.includes('curl -s -m 30') && facts.Asked.includes(cfg.htmlPath),
      'the summary says what was asked (the task\'s prompt, HTML in it as text)');
    must(/5 files changed, \+\d+ −\d+/.test(facts['What it did'] || ''), `what it did: ${facts['What it did']}`);
    must(/^\$0\.00, 0 turns/.test(facts.Cost || '') && /\d+ s, /.test(facts.Time || ''),
      `cost and time: ${facts.Cost} / ${facts.Time}`);
    must(facts.Approvals === '1 asked: 0 allowed, 1 denied', `approvals: ${facts.Approvals}`);
    const hosts = facts['Network hosts'] || '';
    must(hosts.includes(`127.0.0.1:${cfg.hport} 1 allowed`) && hosts.includes('127.0.0.1:9 1 refused'),
      `network hosts: ${hosts.replace(/\n/g, '; ')}`);
    must(facts['Automation files'] === 'none touched', `automation files: ${facts['Automation files']}`);
    must(!Object.values(facts).some((v) => /^\s*[{[]"/.test(v)), 'no fact is raw JSON');

    // 4. The diff: a file list, one block per file, coloured.
    const names = await page.locator('#run-files .fname').allInnerTexts();
    must(names.length === 5 && names.some((x) => x.includes(cfg.htmlPath)),
      `the file list names the five files, the HTML path as text: ${names.join(' | ')}`);
    // A run names its files: a bidi override would show another name than git's.
    const bidi = await page.evaluate(() => ({
      raw: /[\u200b-\u200f\u2028-\u202e\u2060-\u206f]/.test(document.querySelector('#run').textContent),
      shown: [...document.querySelectorAll('#run-files .fname')].some((d) => d.textContent.includes('notes\\u202etxt.sh')),
    }));
    must(!bidi.raw && bidi.shown, `a path's U+202E is shown as \\u202e, never raw: ${JSON.stringify(bidi)} ${names.join(' | ')}`);
    const inert = await page.evaluate(() => ({
      img: document.querySelectorAll('#run img, #run b').length, pwned: typeof window.__pwned,
      line: [...document.querySelectorAll('#run-diff .d-add')].some((d) => d.textContent.includes('<img src=x onerror=window.__pwned=1>')),
      path: [...document.querySelectorAll('#run-diff .dfile-toggle')].some((d) => d.textContent === '<img src=x onerror=window.__pwned=2>.txt'),
    }));
    must(inert.img === 0 && inert.pwned === 'undefined' && inert.line && inert.path,
      'the <img onerror> in a diff line and in a path renders as text: no element, nothing ran');
    const colours = await page.evaluate(() => {
      const cs = (sel) => { const e = document.querySelector('#run-diff ' + sel); const s = e && getComputedStyle(e); return s ? s.color + '/' + s.backgroundColor : null; };
      return { add: cs('.d-add'), del: cs('.d-del'), ctx: cs('.d-ctx'), hunk: cs('.d-hunk'), head: cs('.d-head') };
    });
    must(colours.add && colours.ctx && colours.add !== colours.ctx && colours.del !== colours.ctx &&
      colours.del !== colours.add && colours.hunk !== colours.ctx,
      `the diff is coloured: added ${colours.add}, removed ${colours.del}, hunk ${colours.hunk}, context ${colours.ctx}`);
    for (const sel of ['#run-diff .d-add', '#run-diff .d-del', '#run-diff .d-hunk']) {
      const c = await page.evaluate(contrastIn, sel);
      must(c.ratio >= 4.5, `${sel} is readable: ${c.ratio.toFixed(2)}:1`);
    }

    // 5. Fold and unfold a file; the file list goes to a file.
    const first = page.locator('#run-diff .dfile').first();
    const body = first.locator('pre');
    await first.locator('.dfile-toggle').click();
    must(!(await body.isVisible()) && (await first.locator('.dfile-toggle').getAttribute('aria-expanded')) === 'false',
      'a file\'s header folds its block');
    await first.locator('.dfile-toggle').click();
    must(await body.isVisible(), 'and unfolds it');
    await first.locator('.dfile-toggle').click();
    await page.locator('#run-files .fname').first().click();
    must(await body.isVisible(), 'the file list opens a folded file');

    // 6. Keyboard: j/k move between files, o folds, ? helps; not inside a text field.
    await page.locator('#h-run').click();
    const focused = () => page.evaluate(() => {
      const s = document.activeElement && document.activeElement.closest('.dfile');
      return s ? s.id : null;
    });
    // The file list's click made the first file the current one.
    const seq = [];
    for (const key of ['k', 'j', 'j', 'k']) { await page.keyboard.press(key); seq.push(await focused()); }
    must(seq.join() === 'dfile-0,dfile-1,dfile-2,dfile-1', `k, j, j, k go to files ${seq.join(', ')}`);
    const cur = page.locator('#dfile-1 pre');
    await page.keyboard.press('o');
    must(!(await cur.isVisible()), 'o folds the current file');
    await page.keyboard.press('o');
    must(await cur.isVisible(), 'o again unfolds it');
    await page.keyboard.press('?');
    must(await page.locator('#run-help').isVisible(), '? opens the shortcuts help');
    await page.keyboard.press('Escape');
    must(!(await page.locator('#run-help').isVisible()) && page.url().includes('#run/'),
      'Escape closes the help (and stays on the run)');

    // 7. Push and Continue: the exact command to copy.
    await page.getByRole('button', { name: 'Push' }).click();
    must((await page.locator('#run-cmd-text').innerText()) === 'cwctl run push ' + cfg.run,
      'Push shows the command: cwctl run push ' + cfg.run);
    await page.getByRole('button', { name: 'Continue' }).click();
    const ta = page.locator('#run-cmd-prompt');
    await ta.focus();
    await page.keyboard.type("jkm? don't stop");
    must((await ta.inputValue()) === "jkm? don't stop" && dialogs.length === 0 &&
      !(await page.locator('#run-help').isVisible()),
      'keys typed in the follow-up box are text: no shortcut fired, no merge asked');
    must((await page.locator('#run-cmd-text').innerText()) ===
      `cwctl run continue ${cfg.run} --prompt 'jkm? don'\\''t stop'`,
      `Continue shows the command, the prompt quoted: ${await page.locator('#run-cmd-text').innerText()}`);

    // 8. The timeline: times and sentences.
    const tl = await page.locator('#run-timeline li').evaluateAll((lis) => lis.map((li) => ({
      kind: li.dataset.kind, time: li.querySelector('time').textContent, text: li.innerText })));
    const kinds = tl.map((x) => x.kind);
    must(['queued', 'started', 'approval_request', 'approval_answer', 'ended'].every((k) => kinds.includes(k)) &&
      tl.every((x) => /^\d\d:\d\d:\d\d/.test(x.time) && !x.text.includes('{"')),
      `the timeline: ${tl.map((x) => x.text.replace(/\s+/g, ' ')).join(' | ')}`);

    await noOverflow(page, '1280 px');
    await page.locator('#run-cmd').evaluate((e) => { e.hidden = true; });
    await page.evaluate(() => window.scrollTo(0, 0));
    const shot = async (file) => {
      const box = await page.locator('#run').boundingBox();
      const y = Math.max(0, box.y + (await page.evaluate(() => window.scrollY)) - 8);
      await page.screenshot({ path: path.join(cfg.shots, file), fullPage: true,
        clip: { x: 0, y, width: page.viewportSize().width, height: Math.min(box.height + 16, 2000) } });
    };
    await shot('review-1280.png');

    // 9. A phone's width.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForFunction(() => window.innerWidth === 390);
    await noOverflow(page, '390 px');
    const btn = await page.locator('#run-merge').boundingBox();
    must(btn && btn.x >= 0 && btn.x + btn.width <= 390, 'the Merge button is on the screen at 390 px');
    await shot('review-390.png');
    await page.setViewportSize({ width: 1280, height: 900 });

    // 10. m asks first: dismissed, nothing is merged.
    const before = git('rev-parse', 'HEAD');
    await page.locator('#h-run').click();
    await page.keyboard.press('m');
    await page.waitForFunction(() => true);
    must(dialogs.length === 1 && dialogs[0].includes('Merge run ' + cfg.run) && git('rev-parse', 'HEAD') === before,
      'm asks before it merges; dismissed, main did not move');

    // 11. The Merge button merges; the page then says so and the buttons go.
    await page.locator('#run-merge').click();
    await page.locator('#run-result', { hasText: 'Merged run ' + cfg.run }).waitFor(DEADLINE(30));
    const merged = page.locator('#run-state[data-state="merged"]');
    await merged.waitFor(DEADLINE(30));
    const mtext = await merged.innerText();
    must(/^Merged\b.*\bmain\b/.test(mtext), `the page shows the run merged: "${mtext}"`);
    must(execFileSync('git', ['-C', cfg.repo, 'merge-base', '--is-ancestor', 'clockwork/review/' + cfg.run, 'HEAD']) !== null,
      'git: the run\'s branch is in main');
    must(!(await page.locator('#run-merge').isVisible()) && !(await page.locator('#run-discard').isVisible()),
      'Merge and Discard are gone once merged');
    const mc = await page.evaluate(contrastIn, '#run-state');
    must(mc.ratio >= 4.5, `the merged state line passes WCAG AA: ${mc.ratio.toFixed(2)}:1`);
    await page.locator('#run-timeline li[data-kind="run_merged"]').waitFor(DEADLINE(30));
    ok('the timeline has the merge');
    const foreign = requests.filter((u) => !u.startsWith(origin + '/'));
    must(foreign.length === 0, `all ${requests.length} requests went to ${origin}`);
  } finally {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  console.log(`inbox-review: ${n} passed`);
}
main().catch((e) => { console.log('FAIL - ' + e.message); process.exit(1); });
