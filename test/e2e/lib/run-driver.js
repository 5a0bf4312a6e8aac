#!/usr/bin/env node
// Plays the daemon's side of `cw-runner run` for end-to-end tests.
//
// usage: node run-driver.js RUNNER RUNMSG.json OUT.jsonl [options]
//   --allow STR      answer allow to approval requests whose input mentions STR
//   --deny STR       answer deny to approval requests whose input mentions STR
//   --delay-ms N     wait N ms before answering (default 200)
//   --forge          first send a decision for an id the runner never issued
// Every line the runner writes goes to OUT.jsonl. Requests that match neither pattern
// stay unanswered (the run's wall-clock budget must end them). stdin stays open until
// the runner exits, as the daemon's would. Exits with the runner's exit code.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const readline = require('readline');

const [runner, msgFile, outFile, ...rest] = process.argv.slice(2);
const opt = { allow: [], deny: [], delay: 200, forge: false };
for (let i = 0; i < rest.length; i++) {
  if (rest[i] === '--allow') opt.allow.push(rest[++i]);
  else if (rest[i] === '--deny') opt.deny.push(rest[++i]);
  else if (rest[i] === '--delay-ms') opt.delay = Number(rest[++i]);
  else if (rest[i] === '--forge') opt.forge = true;
  else { console.error(`run-driver: unknown option ${rest[i]}`); process.exit(2); }
}

const child = spawn(runner, ['run'], { stdio: ['pipe', 'pipe', 'inherit'] });
const out = fs.createWriteStream(outFile);
const send = (m) => { if (child.stdin.writable) child.stdin.write(JSON.stringify(m) + '\n'); };

send(JSON.parse(fs.readFileSync(msgFile, 'utf8')));
readline.createInterface({ input: child.stdout }).on('line', (line) => {
  out.write(line + '\n');
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.type !== 'approval_request') return;
  const text = JSON.stringify(m.input || {});
  let behavior = null;
  if (opt.allow.some((s) => text.includes(s))) behavior = 'allow';
  else if (opt.deny.some((s) => text.includes(s))) behavior = 'deny';
  if (opt.forge) send({ v: 1, type: 'decision', id: 'ap-000000000000000000000000', behavior: 'allow' });
  if (!behavior) return;
  setTimeout(() => send({ v: 1, type: 'decision', id: m.id, behavior,
    message: behavior === 'deny' ? 'denied by the e2e test' : undefined }), opt.delay);
});
child.on('exit', (code, sig) => {
  child.stdin.end();
  out.end(() => process.exit(code === null ? 128 + 9 : code));
});
