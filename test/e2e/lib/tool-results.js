#!/usr/bin/env node
// Reads a model-server.js request log and prints, for one scenario, what the engine
// sent back to the model: one JSON line per tool_result {command, is_error, text},
// taken from the longest conversation the scenario produced.
//   node tool-results.js REQUESTLOG SCENARIO
// With --tools it prints instead every tool name offered to the model in any request.
'use strict';
const fs = require('fs');

const [log, scenario] = process.argv.slice(2).filter((a) => a !== '--tools');
const toolsMode = process.argv.includes('--tools');
const reqs = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
  .filter((r) => r.path === '/v1/messages' && r.body);

if (toolsMode) {
  const names = new Set();
  for (const r of reqs) for (const t of r.body.tools || []) names.add(t.name);
  for (const n of names) console.log(n);
  process.exit(0);
}

let best = null;
for (const r of reqs) {
  if (r.scenario !== scenario) continue;
  if (!best || (r.body.messages || []).length > (best.body.messages || []).length) best = r;
}
if (!best) process.exit(0);
const commands = {};
for (const m of best.body.messages || []) {
  if (m.role !== 'assistant' || !Array.isArray(m.content)) continue;
  for (const b of m.content) if (b.type === 'tool_use') commands[b.id] = (b.input && b.input.command) || b.name;
}
const textOf = (c) => (typeof c === 'string' ? c : Array.isArray(c) ? c.map((b) => b.text || '').join('\n') : '');
for (const m of best.body.messages || []) {
  if (m.role !== 'user' || !Array.isArray(m.content)) continue;
  for (const b of m.content) {
    if (b.type !== 'tool_result') continue;
    console.log(JSON.stringify({ command: commands[b.tool_use_id] || '?', is_error: !!b.is_error, text: textOf(b.content) }));
  }
}
