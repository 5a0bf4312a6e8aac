#!/usr/bin/env node
// Drives the Inbox's review of an imported job in Debian's Chromium (issue 14).
// usage: node inbox-jobs.js CONFIG.json   CONFIG: { nodeModules, cwctl, origin, shots, job }
// Prints "ok N - ..." per check and exits 1 on the first failure.
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

async function main() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'cw-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, viewport: { width: 1100, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    await page.goto(execFileSync(cfg.cwctl, ['inbox'], { encoding: 'utf8' }).trim());
    const card = page.locator('#job-list li', { hasText: cfg.job });
    await card.waitFor(DEADLINE(30));
    const text = await card.innerText();
    must(text.includes('\\u202e') && !text.includes('\u202e'),
      'the prompt shows the bidi control as the escape \\u202e, not as a control');
    must(/override phrase: .*Ignore previous instructions/i.test(text), 'the override phrase is listed');
    must(text.includes('rule floor.force_push'), 'the floor rule its text would trip is listed');
    must(text.includes('ignored key: jobs[0].permissionMode') && text.includes('ignored key: jobs[0].budget'),
      'the ignored keys are listed');
    must(/acceptEdits, \$2 \/ 50 turns \/ 3600 s/.test(text), 'the defaults it runs with are shown');
    await page.screenshot({ path: path.join(cfg.shots, 'inbox-jobs.png') });

    // Without the CSRF token the same request the button makes is refused.
    const st = await page.evaluate(async (job) => (await fetch('/inbox/api/jobs/' + job + '/enable',
      { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).status, cfg.job);
    must(st === 403, 'an enable without the CSRF token is refused (403)');
    must(await card.count() === 1, 'the job is still waiting');

    await card.getByRole('button', { name: 'Enable' }).click();
    await card.waitFor({ state: 'detached', ...DEADLINE(15) });
    must(await page.locator('#no-jobs').isVisible(), 'after Enable the job leaves the review list');
    console.log(`all ${n} browser checks passed`);
  } finally {
    await ctx.close();
  }
}

main().catch((e) => { console.log(`FAIL - ${e.message}`); process.exit(1); });
