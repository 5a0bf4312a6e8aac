#!/usr/bin/env node
// The Inbox groups one run's approvals (issue 26 item 8), in Debian's Chromium through
// playwright-core. usage: node inbox-group.js CONFIG.json
// CONFIG: { nodeModules, cwctl, run, shot }. Prints "ok - ..." per check; exit 1 on the
// first failure.
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
    executablePath: '/usr/bin/chromium', headless: true, viewport: { width: 900, height: 1200 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    await page.goto(execFileSync(cfg.cwctl, ['inbox'], { encoding: 'utf8' }).trim());
    const more = page.locator(`#approval-list li[data-more-run="${cfg.run}"] button`);
    await more.waitFor({ timeout: 60000 });
    const visible = async () => page.evaluate(() =>
      [...document.querySelectorAll('#approval-list li[data-approval]')].filter((li) => !li.hidden).length);
    must(await visible() === 3, `three of the run's six cards show (${await visible()})`);
    const text = await more.textContent();
    must(text.startsWith('3 more from run ' + cfg.run), `one line counts the rest: "${text}"`);
    if (cfg.shot) await page.screenshot({ path: cfg.shot, fullPage: true });
    await more.click();
    await page.waitForFunction(() => [...document.querySelectorAll('#approval-list li[data-approval]')]
      .filter((li) => !li.hidden).length === 6, null, { timeout: 30000 });
    must(await visible() === 6, 'pressed, it shows all six');
    must(await page.locator(`#approval-list li[data-more-run="${cfg.run}"]`).count() === 0,
      'and the line is gone');
  } catch (e) {
    if (cfg.shot) await (ctx.pages()[0]).screenshot({ path: cfg.shot.replace(/\.png$/, '-failed.png'), fullPage: true });
    throw e;
  } finally {
    await ctx.close();
  }
}

main().then(() => process.exit(0), (e) => { console.log(`not ok - ${e.message}`); process.exit(1); });
