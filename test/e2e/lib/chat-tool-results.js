#!/usr/bin/env node
// Reads an openai-chat-server.js request log and prints, for one scenario, what the
// engine sent back to the model: one JSON line per tool message {command, tool, text},
// taken from the longest conversation the scenario produced (the command is the one
// the assistant's tool call carried, or the tool's name).
//   node chat-tool-results.js REQUESTLOG SCENARIO
// With --tools it prints instead every tool name offered to the model in any request
// of that scenario (or of all, without one).
'use strict';
const fs = require('fs');

const [log, scenario] = process.argv.slice(2).filter((a) => a !== '--tools');
const toolsMode = process.argv.includes('--tools');
const reqs = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
  .filter((r) => r.path === '/v1/chat/completions' && r.body);

if (toolsMode) {
  const names = new Set();
  for (const r of reqs) {
    if (scenario && r.scenario !== scenario) continue;
    for (const t of r.body.tools || []) names.add(t.function ? t.function.name : t.name);
  }
  for (const n of names) console.log(n);
  process.exit(0);
}

let best = null;
for (const r of reqs) {
  if (r.scenario !== scenario) continue;
  if (!best || (r.body.messages || []).length > (best.body.messages || []).length) best = r;
}
if (!best) process.exit(0);
const calls = {};
for (const m of best.body.messages || []) {
  if (m.role !== 'assistant' || !Array.isArray(m.tool_calls)) continue;
  for (const c of m.tool_calls) {
    let args = {};
    try { args = JSON.parse(c.function.arguments); } catch { args = {}; }
    calls[c.id] = { tool: c.function.name, command: args.command || c.function.name };
  }
}
const textOf = (c) => (typeof c === 'string' ? c : Array.isArray(c) ? c.map((b) => b.text || '').join('\n') : '');
for (const m of best.body.messages || []) {
  if (m.role !== 'tool') continue;
  const c = calls[m.tool_call_id] || { tool: '?', command: '?' };
  console.log(JSON.stringify({ command: c.command, tool: c.tool, text: textOf(m.content) }));
}
