#!/usr/bin/env node
// The Inbox's network approval cards in Debian's Chromium (issue 26 item 9), through
// playwright-core. usage: node inbox-network.js CONFIG.json
// CONFIG: { nodeModules, cwctl, longHost, longId, loopId, shot }
// On a narrow page: the long host's card shows "CONNECT <whole host>:443", wrapped
// inside the card (no horizontal overflow, nothing past the page's right edge), and the
// loopback ask's card carries its risk first. Prints "ok - ..." per check; exit 1 on
// the first failure.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const { chromium } = require(path.join(cfg.nodeModules, 'playwright-core'));
let n = 0;
function must(cond, what) {
  if (!cond) throw new Error(what);
  n++;
  console.log(`ok ${n} - ${what}`);
}

async function main() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'cw-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 420, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    await page.goto(execFileSync(cfg.cwctl, ['inbox'], { encoding: 'utf8' }).trim());
    const long = page.locator(`#approval-list li[data-approval="${cfg.longId}"]`);
    const loop = page.locator(`#approval-list li[data-approval="${cfg.loopId}"]`);
    await long.waitFor({ timeout: 60000 });
    await loop.waitFor({ timeout: 60000 });
    // Laid out, not only in the page: both cards' command boxes have a size.
    await page.waitForFunction((ids) => ids.every((id) => {
      const pre = document.querySelector(`#approval-list li[data-approval="${id}"] pre.command`);
      return pre && pre.getBoundingClientRect().height > 0;
    }), [cfg.longId, cfg.loopId], { timeout: 60000 });
    const m = await long.evaluate((li) => {
      const pre = li.querySelector('pre.command');
      const r = li.getBoundingClientRect();
      const p = pre.getBoundingClientRect();
      return {
        text: pre.textContent, visible: pre.innerText,
        overflow: pre.scrollWidth - pre.clientWidth,
        right: Math.max(r.right, p.right), width: window.innerWidth,
        docOverflow: document.documentElement.scrollWidth - window.innerWidth,
        lines: Math.round(p.height / parseFloat(getComputedStyle(pre).lineHeight)),
      };
    });
    must(m.text.startsWith(`CONNECT ${cfg.longHost}:443`),
      `the card shows "CONNECT <the whole ${cfg.longHost.length}-byte host>:443" first`);
    must(m.visible.replace(/\s/g, '').includes(`${cfg.longHost}:443`),
      'the whole host is in the text a person sees (innerText)');
    must(m.overflow <= 0, `the command box does not scroll sideways (overflow ${m.overflow}px)`);
    must(m.right <= m.width && m.docOverflow <= 0,
      `nothing passes the page's right edge (card right ${Math.round(m.right)} <= ${m.width})`);
    must(m.lines >= 3, `the host is wrapped over lines (${m.lines}), not cut`);
    const risk = await loop.evaluate((li) => ({
      risk: li.dataset.risk, first: li.firstElementChild.textContent,
      cmd: li.querySelector('pre.command').textContent,
    }));
    must(risk.risk === 'outside_worktree' && risk.first.startsWith('Outside the worktree') &&
      risk.first.includes('network.private_address'),
      `the loopback ask's card says its risk first ("${risk.first}")`);
    must(risk.cmd.startsWith('CONNECT 127.0.0.1:'), `the loopback card shows "${risk.cmd.split('\n')[0]}"`);
    if (cfg.shot) await page.screenshot({ path: cfg.shot, fullPage: true });
  } catch (e) {
    if (cfg.shot) await (ctx.pages()[0]).screenshot({ path: cfg.shot.replace(/\.png$/, '-failed.png'), fullPage: true });
    throw e;
  } finally {
    await ctx.close();
  }
}

main().then(() => process.exit(0), (e) => { console.log(`not ok - ${e.message}`); process.exit(1); });
