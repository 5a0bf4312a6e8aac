#!/usr/bin/env node
// The Inbox's Merge of a run that changes automation files (SPEC U3), in Debian's
// Chromium through playwright-core.
//
// usage: node inbox-automation.js CONFIG.json
// CONFIG: { nodeModules, cwctl, origin, run, repo, files: [paths] }
// The run view lists the automation files; Merge opens a confirmation that names each
// one; dismissing it merges nothing; accepting it lands the run. Prints "ok - ..." per
// check and exits 1 on the first failure.
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

async function main() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'cw-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    const dialogs = [];
    let answer = 'dismiss';
    page.on('dialog', (d) => { dialogs.push(d.message()); if (answer === 'accept') d.accept(); else d.dismiss(); });
    await page.goto(execFileSync(cfg.cwctl, ['inbox'], { encoding: 'utf8' }).trim());
    await page.evaluate((id) => { location.hash = '#run/' + id; }, cfg.run);
    const facts = page.locator('#run-facts', { hasText: 'Automation files' });
    await facts.waitFor(DEADLINE(30));
    const text = await facts.innerText();
    must(cfg.files.every((f) => text.includes(f)), 'the run view lists the run\'s automation files');
    const before = git('rev-parse', 'HEAD');
    const merge = page.getByRole('button', { name: 'Merge' });
    await merge.waitFor({ state: 'visible', ...DEADLINE(30) });
    await merge.click();
    await page.locator('#run-result', { hasText: 'Not merged' }).waitFor(DEADLINE(30));
    must(dialogs.length === 1 && cfg.files.every((f) => dialogs[0].includes(f)),
      'Merge asks for a confirmation that names every automation file');
    must(git('rev-parse', 'HEAD') === before && !fs.existsSync(path.join(cfg.repo, cfg.files[0])),
      'dismissed: nothing was merged');
    answer = 'accept';
    await merge.click();
    await page.locator('#run-result', { hasText: 'Merged run ' + cfg.run }).waitFor(DEADLINE(30));
    must(dialogs.length === 2 && fs.existsSync(path.join(cfg.repo, cfg.files[0])),
      'confirmed: the run landed, automation files included');
  } finally {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}
main().catch((e) => { console.log('FAIL - ' + e.message); process.exit(1); });
