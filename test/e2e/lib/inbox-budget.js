#!/usr/bin/env node
// The Inbox's budget question in Debian's Chromium (issue 23), through playwright-core.
// usage: node inbox-budget.js CONFIG.json    CONFIG: { nodeModules, cwctl, id }
// The card of approval `id` shows the runner's question ("The dollar budget is reached:
// ... extend by ..., or stop") with Extend and Stop buttons; Extend is pressed, and
// the page says it was approved and the card goes. Prints "ok - ..." per check; exit 1
// on the first failure.
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
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    await page.goto(execFileSync(cfg.cwctl, ['inbox'], { encoding: 'utf8' }).trim());
    const card = page.locator(`#approval-list li[data-approval="${cfg.id}"]`);
    await card.waitFor({ timeout: 60000 });
    const c = await card.evaluate((li) => ({
      tool: li.querySelector('.tool').textContent,
      text: li.querySelector('pre.command').textContent,
      yes: li.querySelector('button.approve').textContent,
      no: li.querySelector('button.deny').textContent,
    }));
    must(c.tool === 'budget', `the card is the budget question (tool "${c.tool}")`);
    must(/The dollar budget is reached: \$0\.015 spent of \$0\.01/.test(c.text) &&
      /extend by \$0\.01/.test(c.text) && /or stop/.test(c.text),
      `the card shows the question: "${c.text.slice(0, 120)}..."`);
    must(c.yes === 'Extend' && c.no === 'Stop', `its buttons are "${c.yes}" and "${c.no}"`);
    // The page's own answer: the POST the button makes, and what the daemon said.
    const [resp] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' &&
        r.url().includes(`/inbox/api/approvals/${cfg.id}`), { timeout: 60000 }),
      card.locator('button.approve').click(),
    ]);
    const j = await resp.json();
    const body = j.approval || j;
    must(resp.status() === 200 && body.state === 'allowed',
      `Extend pressed: the daemon answered ${resp.status()}, the approval is "${body.state}"`);
    await card.waitFor({ state: 'detached', timeout: 30000 });
    must(true, 'the card is gone from the pending list');
  } finally {
    await ctx.close();
  }
}

main().then(() => process.exit(0), (e) => { console.log(`not ok - ${e.message}`); process.exit(1); });
