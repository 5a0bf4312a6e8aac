#!/usr/bin/env node
// Reads a responses-server.js request log and prints, for one scenario, what the engine
// sent back to the model: one JSON line per function_call_output {tool, command,
// output}, taken from the longest conversation the scenario produced (command is the
// call's cmd/command argument).
//   node responses-results.js REQUESTLOG SCENARIO
// With --tools it prints instead every tool name offered to the model in any request.
'use strict';
const fs = require('fs');

const [log, scenario] = process.argv.slice(2).filter((a) => a !== '--tools');
const toolsMode = process.argv.includes('--tools');
const reqs = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
  .filter((r) => /\/responses$/.test(r.path || '') && r.body);

if (toolsMode) {
  const names = new Set();
  for (const r of reqs) for (const t of r.body.tools || []) names.add(t.name || t.type);
  for (const n of names) console.log(n);
  process.exit(0);
}

let best = null;
for (const r of reqs) {
  if (r.scenario !== scenario) continue;
  if (!best || (r.body.input || []).length > (best.body.input || []).length) best = r;
}
if (!best) process.exit(0);
const calls = {};
for (const i of best.body.input || []) {
  if (i.type === 'function_call') {
    let args = {};
    try { args = JSON.parse(i.arguments || '{}'); } catch { args = {}; }
    const cmd = args.cmd || args.command || args.chars || '';
    calls[i.call_id] = { tool: i.name, command: Array.isArray(cmd) ? cmd.join(' ') : String(cmd) };
  } else if (i.type === 'function_call_output') {
    const c = calls[i.call_id] || {};
    const output = typeof i.output === 'string' ? i.output : JSON.stringify(i.output);
    console.log(JSON.stringify({ tool: c.tool, command: c.command, output }));
  }
}
