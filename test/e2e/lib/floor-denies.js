#!/usr/bin/env node
// Reads a runner's output and checks the floor's denials against an expectation file.
//   node floor-denies.js RUNNER-OUT.jsonl EXPECT RECEIVED-OUT
// EXPECT has one line per command: RULE<TAB>JSON-STRING-OF-THE-COMMAND. Every command
// must appear, byte for byte, as the "command" of a floor_deny (a floor.* rule) or
// rule_deny (a config.* rule) event with that rule. Every denial event the runner
// emitted is written to RECEIVED-OUT as {command, rule, kind}, one per line: what the
// hook and the bridge received from the engine. Exits 1 when a command is missing.
'use strict';
const fs = require('fs');

const [out, expect, recv] = process.argv.slice(2);
const denies = fs.readFileSync(out, 'utf8').split('\n').filter(Boolean)
  .map((l) => { try { return JSON.parse(l); } catch { return {}; } })
  .filter((m) => m.type === 'event' && (m.kind === 'floor_deny' || m.kind === 'rule_deny'));
fs.writeFileSync(recv, denies.map((m) => JSON.stringify({ command: m.command, rule: m.rule,
  kind: m.kind })).join('\n') + '\n');
const got = new Map(denies.map((m) => [m.command, m]));
let bad = 0;
for (const line of fs.readFileSync(expect, 'utf8').split('\n').filter(Boolean)) {
  const tab = line.indexOf('\t');
  const rule = line.slice(0, tab);
  const cmd = JSON.parse(line.slice(tab + 1));
  const kind = rule.startsWith('floor.') ? 'floor_deny' : 'rule_deny';
  const m = got.get(cmd);
  if (!m || m.rule !== rule || m.kind !== kind) {
    console.log(`    not denied as ${rule} (${kind}): ${JSON.stringify(cmd)}` +
      (m ? ` got ${m.rule} ${m.kind}` : ' (never received)'));
    bad++;
  }
}
process.exit(bad ? 1 : 0);
