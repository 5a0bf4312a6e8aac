#!/usr/bin/env node
// Writes the model server's scenarios for test/e2e/inbox.test.sh.
// usage: GHP=<token> node inbox-scenarios.js OUT.json
// Each scenario asks for one Bash call of the form sh -c '...', which Claude Code in
// acceptEdits mode sends to the permission-prompt tool. The approved one writes script
// payloads and a token into a file, so they reach the run's log and diff.
'use strict';
const q = (s) => '"' + s.replace(/["\\$`]/g, '\\$&') + '"';
const cmd = (f, words) => `sh -c 'printf "%s\\n" ${words.map(q).join(' ')} > ${f}'`;
const pay = ['<script>window.__pwned=1</script>', '"><img src=x onerror=alert(1)>', process.env.GHP || 'ghp_missing'];
const s = {
  approve: [{ tool: 'Bash', input: { command: cmd('allowed.txt', pay) } }, { text: 'approve done' }],
  deny: [{ tool: 'Bash', input: { command: cmd('denied.txt', ['no']) } }, { text: 'deny done' }],
  late: [{ tool: 'Bash', input: { command: cmd('unanswered.txt', ['late']) } }, { text: 'late done' }],
  stop: [{ tool: 'Bash', input: { command: cmd('stopped.txt', ['stop']) } }, { text: 'stop done' }],
  // Issue 17: with the rm_root starter rule switched off, rm -rf / reaches a person,
  // and the card must say what kind of call it is before anything else.
  risky: [{ tool: 'Bash', input: { command: 'rm -rf /' } }, { text: 'risky done' }],
};
require('fs').writeFileSync(process.argv[2], JSON.stringify(s, null, 1));
