#!/usr/bin/env node
// Drives the Inbox in Debian's Chromium through playwright-core (issue 6 item 5).
//
// usage: node inbox-browser.js CONFIG.json
// CONFIG: { nodeModules, cwctl, origin, shots, approveCmd, denyCmd, lateCmd,
//           approveRun, exportFile, repo, stopTask, secrets: [..] }
// Prints "ok - ..." per check and exits 1 on the first failure. Every request the
// Inbox page makes is recorded and must go to the daemon's own origin.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const http = require('http');
const { execFileSync } = require('child_process');

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const { chromium, request: pwRequest } = require(path.join(cfg.nodeModules, 'playwright-core'));
const DEADLINE = (s) => ({ timeout: s * 1000 });

let n = 0;
function ok(what) { n++; console.log(`ok ${n} - ${what}`); }
function must(cond, what) { if (!cond) throw new Error(what); ok(what); }
function cwctl(...args) { return execFileSync(cfg.cwctl, args, { encoding: 'utf8' }).trim(); }
function approvalField(field, cmdPart) {
  return execFileSync('sqlite3', [cfg.db, `SELECT ${field} FROM approvals WHERE input LIKE '%${cmdPart}%'`],
    { encoding: 'utf8' }).trim();
}
function stateOf(cmdPart) { return approvalField('state', cmdPart); }
const { contrastIn } = require('./contrast.js');

async function main() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'cw-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1100, height: 820 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const requests = [];
  const evil = http.createServer((req, res) => {
    res.setHeader('Content-Type', 'text/html');
    res.end('<!doctype html><title>evil</title><p>a page on another site</p>');
  });
  await new Promise((r) => evil.listen(0, '127.0.0.1', r));
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    page.on('request', (r) => requests.push(r.url()));
    let dialogs = 0;
    page.on('dialog', (d) => { dialogs++; d.dismiss(); });

    // 1. No session: the sign-in hint, no data, and the data routes answer 401.
    await page.goto(cfg.origin + '/');
    await page.locator('#signin').waitFor({ state: 'visible', ...DEADLINE(15) });
    const bare = await page.locator('body').innerText();
    must(!bare.includes(cfg.approveCmd) && !bare.includes(cfg.approveRun),
      'without the cookie the page shows the sign-in hint and no data');
    const st = await page.evaluate(async () => (await fetch('/inbox/api/approvals')).status);
    must(st === 401, 'without the cookie /inbox/api/approvals answers 401');

    // 2. Sign in with a one-time code; the address bar ends clean.
    const url = cwctl('inbox');
    await page.goto(url);
    must(new URL(page.url()).pathname === '/' && !page.url().includes('code='),
      'the one-time link redirects to the clean URL /');
    const cookies = await ctx.cookies(cfg.origin);
    const c = cookies.find((x) => x.name === 'cw_inbox');
    must(c && c.httpOnly && c.sameSite === 'Strict', 'the session cookie is HttpOnly and SameSite=Strict');
    const card = (cmd) => page.locator('#approval-list li', { hasText: cmd });
    for (const cmd of [cfg.approveCmd, cfg.denyCmd, cfg.lateCmd]) {
      await card(cmd).waitFor(DEADLINE(90));
    }
    ok('the three pending approvals show with their commands');

    // Issue 17: the risk level comes first on the card, with the rule that raised it.
    const risky = page.locator('#approval-list li[data-risk="destructive"]', { hasText: 'config.rm_root' });
    await risky.waitFor(DEADLINE(90));
    const first = await risky.evaluate((li) => {
      const el = li.firstElementChild;
      return { cls: el.className, text: el.textContent, cmd: li.querySelector('pre').textContent };
    });
    must(first.cls === 'risk' && /^Destructive/.test(first.text) && first.text.includes('config.rm_root') &&
      first.cmd === cfg.riskyCmd,
      `the rm -rf / card shows its risk first: "${first.text}"`);
    const color = await risky.locator('.risk').evaluate((e) => getComputedStyle(e).backgroundColor);
    must(color !== 'rgb(234, 238, 242)', `the destructive badge is marked apart from ordinary ones (${color})`);
    const plain = await card(cfg.approveCmd).evaluate((li) => li.firstElementChild.textContent);
    must(plain === 'Ordinary', `an ordinary command's card says so first ("${plain}")`);
    const listing = cwctl('approvals');
    const row = listing.split('\n').find((l) => l.includes(cfg.riskyCmd));
    must(row && row.includes('destructive (config.rm_root)'),
      `cwctl approvals shows the risk: ${row && row.replace(/\s+/g, ' ')}`);
    const id = row.split(/\s+/)[0];
    must(cwctl('approvals', 'show', id).split('\n')[0] === 'risk:     destructive (config.rm_root)',
      'cwctl approvals show prints the risk first');

    await page.waitForFunction(() => document.title === '(4) Clockwork Inbox', null, DEADLINE(20));
    must((await page.title()) === '(4) Clockwork Inbox',
      `the tab's title counts the pending approvals, rm -rf / included (${await page.title()})`);
    // The list is rendered anew on every refresh (an event, the 15 s timer): a card can
    // be replaced while it is being shot. The picture is documentation; take it again.
    for (let tries = 0; ; tries++) {
      try { await risky.screenshot({ path: path.join(cfg.shots, 'inbox-risk.png') }); break; }
      catch (e) { if (tries >= 4 || !/not attached/.test(e.message)) throw e; }
    }
    const text = await card(cfg.approveCmd).innerText();
    must(/Bash/.test(text) && /\d+ (s|min) left/.test(text) && text.includes('task ' + cfg.approveTask),
      `an approval shows its tool, task and time left before the fail-safe deny (${text.split('\n')[1]})`);
    must(!(await page.locator('body').innerText()).includes(cfg.secrets[0]),
      'a secret in a pending command is masked on the page');
    await page.screenshot({ path: path.join(cfg.shots, 'inbox-approval.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(cfg.shots, 'inbox-phone.png') });
    const narrow = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1);
    must(narrow, 'at a phone width the page does not scroll sideways');
    await page.setViewportSize({ width: 1100, height: 820 });

    // 3. The code is spent: a second use from a cookie-less client gets nothing. A client
    // of its own: clearing this browser's cookies meanwhile would sign the open page out
    // whenever it refreshed in that moment (its 15 s timer, or an event).
    const rq = await pwRequest.newContext();
    const resp = await rq.get(url, { maxRedirects: 0 });
    must(resp.status() === 403, 'the one-time code cannot be used twice (403)');
    must(!resp.headers()['set-cookie'], 'a spent code sets no cookie');
    await rq.dispose();

    // 4. Cross-origin: a page on another site cannot answer, with or without a token.
    const csrf = await page.evaluate(async () => (await (await fetch('/inbox/session')).json()).csrf);
    const target = `${cfg.origin}/inbox/api/approvals/${approvalField('id', cfg.lateCmd)}`;
    const forged = await ctx.request.post(target, {
      headers: { Origin: 'http://evil.example', 'X-CSRF-Token': csrf, 'Content-Type': 'application/json' },
      data: { decision: 'allow' } });
    must(forged.status() === 403, 'a POST carrying a foreign Origin is refused (403), even with the CSRF token');
    const evilPage = await ctx.newPage();
    const evilOrigin = `http://localhost:${evil.address().port}`;
    await evilPage.goto(evilOrigin + '/');
    const evilRes = await evilPage.evaluate(async (t) => {
      try {
        const r = await fetch(t, { method: 'POST', credentials: 'include', mode: 'no-cors',
          headers: { 'Content-Type': 'text/plain' }, body: '{"decision":"allow"}' });
        return r.type;
      } catch (e) { return 'blocked'; }
    }, target);
    await evilPage.close();
    must(stateOf(cfg.lateCmd) === 'pending', `a page on another site cannot answer (fetch: ${evilRes}; still pending)`);

    // 5. Approve one, deny the other, from the page: the SAME respond path as cwctl.
    await card(cfg.approveCmd).getByRole('button', { name: 'Approve' }).click();
    await card(cfg.denyCmd).locator('input').fill('not this one');
    await card(cfg.denyCmd).getByRole('button', { name: 'Deny' }).click();
    await card(cfg.approveCmd).waitFor({ state: 'detached', ...DEADLINE(20) });
    await card(cfg.denyCmd).waitFor({ state: 'detached', ...DEADLINE(20) });
    must(stateOf(cfg.approveCmd) === 'allowed' && stateOf(cfg.denyCmd) === 'denied',
      'Approve and Deny from the page are recorded');
    // 5b. Issue 17: the destructive one is denied from the page too.
    await risky.getByRole('button', { name: 'Deny' }).click();
    await risky.waitFor({ state: 'detached', ...DEADLINE(20) });
    must(approvalField('state', 'rm -rf /') === 'denied', 'the rm -rf / approval is denied from the page');



    // 6. The run view follows the readable transcript and shows the report.
    await page.getByRole('button', { name: `Open run ${cfg.approveRun}` }).click();
    // The whole report is kept, folded, under the summary.
    await page.locator('#run-report', { hasText: '"status"' }).waitFor({ state: 'attached', ...DEADLINE(90) });
    await page.locator('#run-facts', { hasText: 'completed' }).waitFor(DEADLINE(30));
    await page.locator('#run-log .tr-final').first().waitFor(DEADLINE(30));
    const log = await page.locator('#run-log').innerText();
    if (!(/^tool +Bash /m.test(log) && /^answer +approval /m.test(log) && /^final /m.test(log)))
      console.log('run view log:\n' + log.slice(0, 2000));
    must(/^tool +Bash /m.test(log) && /^answer +approval /m.test(log) && /^final /m.test(log),
      'the run view shows the readable transcript: the tool call, the answer, the final message');
    must(!log.includes(cfg.secrets[0]) && !log.includes(cfg.secrets[1]), 'the run view\'s log is masked');
    await page.locator('#run-log').evaluate((e) => { e.scrollTop = 0; });
    await page.locator('#run').screenshot({ path: path.join(cfg.shots, 'inbox-run.png') });

    // 6b. The run's diff, as text, and the Merge button (same path as cwctl run merge).
    await page.locator('#run-files li', { hasText: 'allowed.txt' }).waitFor(DEADLINE(30));
    const diffText = await page.locator('#run-diff').innerText();
    const diffHtml = await page.locator('#run-diff').innerHTML();
    must(diffText.includes('+<script>window.__pwned=1</script>') && !diffHtml.includes('<script>') &&
      !diffText.includes(cfg.secrets[0]),
      'the run view shows the diff of the run\'s branch as text (payload escaped, secret masked)');
    await page.getByRole('button', { name: 'Merge' }).click();
    await page.locator('#run-result', { hasText: 'Merged run ' + cfg.approveRun }).waitFor(DEADLINE(30));
    must(fs.existsSync(path.join(cfg.repo, 'allowed.txt')),
      'Merge lands the run\'s branch in the repository\'s checked-out branch');
    await page.evaluate(() => { location.hash = ''; });

    // 6c. Start a run of a task from the page, then stop it while it waits.
    await page.getByRole('button', { name: 'Start a run of ' + cfg.stopTask }).click();
    const stopBtn = page.locator('#run-stop');
    await stopBtn.waitFor({ state: 'visible', ...DEADLINE(30) });
    await page.locator('#run-log .tr-waiting').first().waitFor(DEADLINE(90));
    // Issue 27: the "waiting for approval" line is readable (WCAG AA, >= 4.5:1, from
    // the computed colours of its text and tag against the band behind them).
    for (const sel of ['#run-log .tr-waiting', '#run-log .tr-waiting .tr-tag']) {
      const c = await page.evaluate(contrastIn, sel);
      must(c && c.ratio >= 4.5, `the waiting line (${sel}) passes WCAG AA: ${c && c.ratio.toFixed(2)}:1 (${c && c.fg} on ${c && c.bg})`);
    }
    await stopBtn.click();
    await page.locator('#run-facts', { hasText: 'stopped' }).waitFor(DEADLINE(60));
    ok('Start a run and Stop from the page: the run started, waited, and was stopped');
    await page.evaluate(() => { location.hash = ''; });

    // 7. The unanswered one: the fail-safe deny shows up in the journal view.
    await page.locator('#journal-list li[data-kind="approval_timeout"], #journal-list li[data-kind="approval_expired"]')
      .filter({ hasText: cfg.lateRun }).first().waitFor(DEADLINE(120));
    ok('the fail-safe deny of the unanswered approval shows in the journal view');
    must(stateOf(cfg.lateCmd) === 'expired', 'the unanswered approval is recorded as expired');

    // 8. Keyboard: the Approve button is reachable with Tab and shows a focus ring.
    const focusable = await page.evaluate(() => Array.from(document.querySelectorAll('button')).every((b) => b.tabIndex >= 0));
    must(focusable, 'every action is a real, focusable button');

    must(dialogs === 0, 'no dialog opened on the Inbox page');
    const foreign = requests.filter((u) => !u.startsWith(cfg.origin + '/'));
    must(requests.length > 5 && foreign.length === 0,
      `all ${requests.length} requests of the Inbox page went to ${cfg.origin}` + (foreign.length ? `: ${foreign}` : ''));

    // 9. The proof-of-work export, opened from disk: no script runs, nothing loads.
    const t0 = Date.now();
    while (!fs.existsSync(cfg.exportFile)) {
      if (Date.now() - t0 > 120000) throw new Error('the export file did not appear');
      await new Promise((r) => setTimeout(r, 200));
    }
    const ep = await ctx.newPage();
    const epReq = [];
    let epDialogs = 0;
    ep.on('request', (r) => epReq.push(r.url()));
    ep.on('dialog', (d) => { epDialogs++; d.dismiss(); });
    await ep.goto('file://' + cfg.exportFile);
    await ep.waitForLoadState('load');
    const etext = await ep.locator('body').innerText();
    const pwned = await ep.evaluate(() => typeof window.__pwned !== 'undefined' || document.scripts.length);
    must(epDialogs === 0 && !pwned, 'the export runs no script (no dialog, no script element)');
    must(epReq.length === 1 && epReq[0].startsWith('file://'), `the export makes no request (${epReq.length})`);
    must(etext.includes('<script>alert(1)</script>') && etext.includes('onerror=alert(1)'),
      'the payloads show as text in the export');
    must(!cfg.secrets.some((s) => etext.includes(s)), 'no secret is visible in the export');
    must(etext.includes(cfg.approveCmd.replace(/'/g, "'")) || etext.includes('allowed.txt'),
      'the export shows the approved command and its diff');
    await ep.screenshot({ path: path.join(cfg.shots, 'inbox-export.png'), fullPage: false });
    await ep.close();
  } finally {
    await ctx.close();
    evil.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  console.log(`inbox-browser: ${n} passed`);
}

main().catch((e) => { console.log(`FAIL - ${e.message}`); process.exit(1); });
