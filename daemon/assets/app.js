// The Inbox page. Everything it shows comes from /inbox/api/..., authorised by the
// session cookie; answers carry the per-session CSRF token in a header. The DOM is
// built with textContent only, never parsed as HTML: run output is untrusted text.
'use strict';

const state = { csrf: null, tasks: {}, runs: [], approvals: [], journal: [], jobs: [],
  expanded: new Set(), curFile: -1, runDiff: null, runSum: null, runAuto: [],
  runView: null, diffOf: null, logOffset: 0, busy: false, pending: new Set(),
  dirty: new Set(), flushTimer: null, logBusy: false, logAgain: false, es: null };

function $(id) { return document.getElementById(id); }
// The characters that show nothing or reorder what follows (bidi overrides, isolates,
// zero-width ones: the set cwctl escapes, common/vis.c), as \uXXXX: a run names its
// files and writes its lines, and "notes\u202etxt.sh" would read "noteshs.txt".
const HIDDEN = /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u3164\ufeff\uffa0\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufe00-\ufe0f\ufff9-\ufffb\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]/gu;
function shown(s) {
  return String(s).replace(HIDDEN, (c) => '\\u' + c.codePointAt(0).toString(16).padStart(4, '0'));
}
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = shown(text);
  return e;
}
function setStatus(t) { $('status').textContent = t; }

async function api(path, opts) {
  const o = Object.assign({ credentials: 'same-origin', cache: 'no-store' }, opts || {});
  o.headers = Object.assign({ 'Accept': 'application/json' }, o.headers || {});
  const r = await fetch(path, o);
  let body = null;
  try { body = await r.json(); } catch (e) { body = null; }
  if (r.status === 401) { signedOut(); throw new Error('not signed in'); }
  if (!r.ok) throw new Error(body && body.error ? body.error.message : ('HTTP ' + r.status));
  return body;
}

// A write through the gateway: JSON body, the session's CSRF token in a header.
function post(path, body) {
  return api(path, { method: 'POST', body: body ? JSON.stringify(body) : '',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': state.csrf } });
}

function signedOut() {
  state.csrf = null;
  if (state.es) { state.es.close(); state.es = null; }
  for (const s of ['approvals', 'jobs', 'runs', 'journal', 'run']) $(s).hidden = true;
  for (const s of ['approval-list', 'job-list', 'journal-list']) $(s).replaceChildren();
  $('run-table').tBodies[0].replaceChildren();
  $('signin').hidden = false;
  setStatus('Not signed in');
}

function ago(iso) {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 60) return s + ' s ago';
  if (s < 3600) return Math.round(s / 60) + ' min ago';
  return Math.round(s / 3600) + ' h ago';
}
function left(iso) {
  if (!iso) return 'no deadline';
  const s = Math.round((Date.parse(iso) - Date.now()) / 1000);
  if (s <= 0) return 'denying now';
  if (s < 120) return s + ' s left';
  return Math.round(s / 60) + ' min left';
}
function soon(iso) { return iso && Date.parse(iso) - Date.now() < 120000; }
function commandOf(a) {
  const i = a.input;
  if (i && typeof i === 'object') {
    if (typeof i.command === 'string') return i.command;
    // A budget question (the runner's own, issue 23): Approve extends, Deny stops.
    if (a.tool === 'budget' && typeof i.question === 'string') return i.question;
    // A network ask: the host whole and first (the card wraps it, never cuts it),
    // then the question (issue 26 item 9).
    if (a.tool === 'network' && typeof i.host === 'string') {
      const h = i.host.includes(':') ? '[' + i.host + ']' : i.host;
      return (typeof i.method === 'string' ? i.method : 'CONNECT') + ' ' + h + ':' +
        String(i.port) + (typeof i.question === 'string' ? '\n\n' + i.question : '');
    }
    if (typeof i.file_path === 'string') return i.file_path;
  }
  return JSON.stringify(i, null, 2);
}
// The fail-safe deny comes at the approval's own deadline, or else when the run's
// wall-clock budget ends: its start plus the task's budget_seconds.
function deadlineOf(a) {
  if (a.deadline) return a.deadline;
  const r = state.runs.find((x) => x.id === a.run_id);
  const t = r && state.tasks[r.task];
  if (!r || !t || !r.started_at) return null;
  return new Date(Date.parse(r.started_at) + t.budget_seconds * 1000).toISOString();
}
function taskOf(runId) {
  const r = state.runs.find((x) => x.id === runId);
  return r ? r.task : '?';
}

async function answer(a, allow, msgInput, buttons, forTask) {
  buttons.forEach((b) => { b.disabled = true; });
  const body = { decision: allow ? 'allow' : 'deny' };
  if (msgInput.value.trim() !== '') body.message = msgInput.value.trim();
  // "Always for this task": the same path as cwctl approve --for-task.
  if (allow && forTask) body.scope = 'task';
  try {
    const r = await api('/inbox/api/approvals/' + encodeURIComponent(a.id), {
      method: 'POST', body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': state.csrf } });
    let note = '';
    if (r && r.task_rule) note = '; for this task from now on: ' + r.task_rule;
    else if (r && r.task_rule_error) note = '; not remembered: ' + r.task_rule_error;
    setStatus((allow ? 'Approved ' : 'Denied ') + a.tool + ' in run ' + a.run_id + note);
  } catch (e) {
    setStatus('Could not answer: ' + e.message);
  }
  refresh();
}

// Risk levels (common/floor.h), worst first; the words a person reads on the card.
const RISKS = {
  destructive: 'Destructive: deletes or rewrites what cannot be got back',
  fetch_exec: 'Network fetch-and-execute: runs code it downloads',
  outside_worktree: 'Outside the worktree: writes or acts beyond the run\'s directory',
  ordinary: 'Ordinary',
};

const GROUP_SHOW = 3;

function renderApprovals() {
  const ul = $('approval-list');
  ul.replaceChildren();
  $('n-approvals').textContent = state.approvals.length ? String(state.approvals.length) : '';
  // The tab's title carries the count, so a waiting approval shows in a background tab.
  document.title = (state.approvals.length ? '(' + state.approvals.length + ') ' : '') +
    'Clockwork Inbox';
  $('no-approvals').hidden = state.approvals.length > 0;
  // A run that asks many times at once is one group: its first GROUP_SHOW cards, then
  // one line saying how many more it asks, which shows them (issue 26, item 8).
  const counts = {}, seen = {};
  for (const a of state.approvals) counts[a.run_id] = (counts[a.run_id] || 0) + 1;
  for (const a of state.approvals) {
    seen[a.run_id] = (seen[a.run_id] || 0) + 1;
    const collapsed = counts[a.run_id] > GROUP_SHOW && !state.expanded.has(a.run_id);
    const risk = RISKS[a.risk] ? a.risk : 'ordinary';
    const li = el('li', 'card risk-' + risk);
    li.dataset.approval = a.id;
    li.dataset.risk = risk;
    // The kind of call first: the floor's risk level and the rule that raised it.
    const rb = el('div', 'risk', RISKS[risk] + (a.risk_rule ? ' \u00b7 ' + a.risk_rule : ''));
    rb.setAttribute('role', 'note');
    li.append(rb);
    li.append(el('div', 'tool', a.tool));
    const meta = el('div', 'meta');
    meta.append('run ' + a.run_id + ' · task ' + taskOf(a.run_id) + ' · asked ' +
      ago(a.created_at) + ' · ');
    const dl = deadlineOf(a);
    const l = el('span', 'left' + (soon(dl) ? ' soon' : ''), left(dl));
    l.dataset.deadline = dl || '';
    meta.append(l);
    li.append(meta);
    li.append(el('pre', 'command', commandOf(a)));
    const act = el('div', 'actions');
    const msg = el('input');
    msg.type = 'text';
    msg.placeholder = 'Message to the agent (optional, sent with Deny)';
    msg.setAttribute('aria-label', 'Message for ' + a.tool + ' in run ' + a.run_id);
    // A budget question: approving extends the budget, denying ends the run.
    const yes = el('button', 'approve', a.tool === 'budget' ? 'Extend' : 'Approve');
    const no = el('button', 'deny', a.tool === 'budget' ? 'Stop' : 'Deny');
    yes.type = no.type = 'button';
    const btns = [yes, no];
    // Only what can be remembered gets the button: a host, or a command family.
    let always = null;
    if (a.family || a.tool === 'network') {
      always = el('button', 'always', 'Always for this task' +
        (a.family ? ': ' + a.family : ''));
      always.type = 'button';
      btns.push(always);
      always.addEventListener('click', () => answer(a, true, msg, btns, true));
    }
    yes.addEventListener('click', () => answer(a, true, msg, btns));
    no.addEventListener('click', () => answer(a, false, msg, btns));
    act.append(msg, yes);
    if (always) act.append(always);
    act.append(no);
    li.append(act);
    li.hidden = collapsed && seen[a.run_id] > GROUP_SHOW;
    ul.append(li);
    if (collapsed && seen[a.run_id] === GROUP_SHOW) {
      const more = el('li', 'card more');
      more.dataset.moreRun = a.run_id;
      const b = el('button', 'more', (counts[a.run_id] - GROUP_SHOW) + ' more from run ' +
        a.run_id + ' \u00b7 task ' + taskOf(a.run_id) + ': show them');
      b.type = 'button';
      b.addEventListener('click', () => { state.expanded.add(a.run_id); renderApprovals(); });
      more.append(b);
      ul.append(more);
    }
  }
}

// Imported jobs (repository jobs, templates): their security preview, and the one
// explicit act that enables one. The button sends the preview's hash, so a job whose
// file changed after this page drew it is refused instead of enabled unseen.
async function enableJob(j, button) {
  button.disabled = true;
  try {
    await api('/inbox/api/jobs/' + encodeURIComponent(j.name) + '/enable', {
      method: 'POST', body: JSON.stringify({ hash: j.preview.definition_hash }),
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': state.csrf } });
    setStatus('Enabled imported job ' + j.name);
  } catch (e) {
    setStatus('Could not enable: ' + e.message);
  }
  refresh();
}

function findings(p) {
  const out = [];
  for (const r of p.rules || []) out.push('rule ' + r.rule + ': ' + r.text);
  if (p.rules_incomplete) out.push('not every part of the prompt was checked against the rules (too long): read it all');
  for (const o of p.overrides || []) out.push('override phrase: ' + o.text);
  for (const h of p.hidden || []) out.push('hidden ' + h.char + ' (' + h.kind + ') at byte ' + h.offset);
  for (const h of p.homoglyphs || []) out.push('lookalike letters: ' + h.word);
  for (const u of p.urls || []) out.push('URL: ' + u);
  for (const x of p.paths || []) if (x.outside_repository) out.push('path outside the repository: ' + x.path);
  for (const k of p.ignored || []) out.push('ignored key: ' + k);
  for (const c of p.changes || []) out.push('changed ' + c.field);
  return out;
}

function renderJobs() {
  const ul = $('job-list');
  ul.replaceChildren();
  const waiting = state.jobs.filter((j) => j.needs_review && j.preview);
  $('n-jobs').textContent = waiting.length ? String(waiting.length) : '';
  $('no-jobs').hidden = waiting.length > 0;
  for (const j of waiting) {
    const p = j.preview, src = j.source || {}, d = p.defaults || {};
    const li = el('li', 'card');
    li.dataset.job = j.name;
    li.append(el('div', 'tool', j.name));
    li.append(el('div', 'meta', (src.repo || 'template') + ' · ' + (src.path || '') +
      (src.commit ? ' @ ' + src.commit.slice(0, 12) : '') + ' · runs as ' + d.engine + ', ' +
      d.permission_mode + ', $' + d.budget_dollars + ' / ' + d.budget_turns + ' turns / ' +
      d.budget_seconds + ' s · ' + p.warnings + ' warning' + (p.warnings === 1 ? '' : 's')));
    li.append(el('pre', 'command', p.prompt_visible));
    const f = findings(p);
    if (f.length) {
      const fl = el('ul', 'findings');
      for (const x of f) fl.append(el('li', '', x));
      li.append(fl);
    }
    const act = el('div', 'actions');
    const b = el('button', 'approve', src.removed ? 'Removed from its file' : 'Enable');
    b.type = 'button';
    b.disabled = !!src.removed;
    b.addEventListener('click', () => enableJob(j, b));
    act.append(b);
    li.append(act);
    ul.append(li);
  }
}

function renderRuns() {
  const tb = $('run-table').tBodies[0];
  tb.replaceChildren();
  $('no-runs').hidden = state.runs.length > 0;
  for (const r of state.runs) {
    const tr = el('tr');
    const td = el('td');
    const b = el('button', 'link', r.id);
    b.type = 'button';
    b.setAttribute('aria-label', 'Open run ' + r.id);
    b.addEventListener('click', () => { location.hash = '#run/' + r.id; });
    td.append(b);
    tr.append(td, el('td', '', r.task));
    // What was done with it, once the daemon says (its "review" field, issue 27).
    const rs = r.review && typeof r.review.state === 'string' && r.review.state !== 'waiting' ? r.review.state : '';
    tr.append(el('td', 'st-' + r.status, statusText(r) + (rs ? ' · ' + rs : '')));
    const t = state.tasks[r.task];
    tr.append(el('td', '', t ? t.engine : '?'));
    tr.append(el('td', r.sandboxed === false ? 'no' : '',
      r.sandboxed === true ? 'yes' : r.sandboxed === false ? 'NO' : '–'));
    const sp = r.spent || {};
    tr.append(el('td', '', spentMoney(sp) + ' · ' + turns(sp.turns) + ' · ' +
      Math.round(sp.seconds || 0) + ' s'));
    tb.append(tr);
  }
}

function renderJournal() {
  const ol = $('journal-list');
  ol.replaceChildren();
  $('no-journal').hidden = state.journal.length > 0;
  for (const j of state.journal.slice(-100).reverse()) {
    const li = el('li');
    li.dataset.kind = j.kind;
    li.append(el('span', 'kind' + (/deny|refused|disabled|expired|timeout/.test(j.kind) ? ' deny' : ''), j.kind));
    li.append(el('time', '', j.ts));
    if (j.run_id) li.append(el('span', 'run', 'run ' + j.run_id));
    if (j.data !== null && j.data !== undefined) li.append(el('span', 'data', JSON.stringify(j.data)));
    ol.append(li);
  }
}

function renderTasks() {
  const ul = $('task-list');
  ul.replaceChildren();
  const names = Object.keys(state.tasks).sort();
  $('no-tasks').hidden = names.length > 0;
  for (const name of names) {
    const t = state.tasks[name];
    const li = el('li');
    li.dataset.task = name;
    li.append(el('span', 'name', name));
    li.append(el('span', 'meta', t.engine + (t.repo ? ' · ' + t.repo : ' · scratch') +
      (t.enabled === false ? ' · disabled' : '')));
    const b = el('button', '', 'Start a run');
    b.type = 'button';
    b.setAttribute('aria-label', 'Start a run of ' + name);
    b.disabled = t.enabled === false;
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        const r = await post('/inbox/api/runs', { task: name });
        setStatus('Started run ' + r.id + ' of ' + name);
        location.hash = '#run/' + r.id;
      } catch (e) { setStatus('Could not start ' + name + ': ' + e.message); }
      b.disabled = false;
      refresh();
    });
    li.append(b);
    ul.append(li);
  }
}

// Dollars as cwctl shows them: cents, and a fraction of a cent under a dollar.
function money(d) { d = d || 0; return '$' + (d > 0 && d < 1 ? d.toFixed(4) : d.toFixed(2)); }
// A run's spend: "cost unknown" when its model has no price (spent.dollars_known false).
function spentMoney(sp) { return sp && sp.dollars_known === false ? 'cost unknown' : money(sp && sp.dollars); }
function turns(n) { n = n || 0; return n + (n === 1 ? ' turn' : ' turns'); }

// The status, and the exit reason only when it says more ("stopped (budget_turns)").
function statusText(r) {
  return r.status + (r.exit_reason && r.exit_reason !== r.status ? ' (' + r.exit_reason + ')' : '');
}

// ---- The run's review page (issue 27) ----------------------------------------------
// Everything below puts run data into the page with textContent only: paths, diff
// lines, journal text and report fields are the run's, so untrusted.

// "15:40:07" in the viewer's time, the whole instant in the element's title.
function clock(iso) {
  const t = Date.parse(iso);
  return isNaN(t) ? String(iso) : new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
}
function timeEl(iso) {
  const t = el('time', '', clock(iso));
  t.dateTime = iso;
  t.title = iso;
  return t;
}
function duration(s) {
  s = Math.max(0, Math.round(s));
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
  return Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min';
}
// A word for the shell: single-quoted, so nothing in it is expanded.
function shq(s) { return /^[A-Za-z0-9._\/:=-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'"; }

// The run's review state: the daemon's "review" field, or, from a daemon that has none
// yet, what the run's journal says was done with it (run_merged, run_discarded). The
// branch it went into comes from the journal when the field does not name it.
function reviewOf(r, journal) {
  const jr = { state: 'waiting', at: null, detail: '', into: null, pushed: null };
  for (const j of journal) {
    const d = j.data || {};
    if (j.kind === 'run_merged' || j.kind === 'run_landed') {
      jr.state = j.kind === 'run_merged' ? 'merged' : 'landed';
      jr.at = j.ts;
      jr.into = typeof d.into === 'string' ? d.into : null;
      jr.detail = typeof d.result === 'string' ? d.result : '';
    } else if (j.kind === 'run_discarded') {
      jr.state = 'discarded'; jr.at = j.ts; jr.detail = 'branch and worktree deleted';
    }
  }
  const rv = r.review;
  if (!rv || typeof rv.state !== 'string') return jr;
  return { state: rv.state, at: rv.at || null, detail: typeof rv.detail === 'string' ? rv.detail : '',
    into: typeof rv.into === 'string' ? rv.into : jr.into, pushed: rv.pushed || null };
}

const LIVE = ['queued', 'starting', 'running'];

// The state line at the top of the page, and which buttons still apply.
function renderState(r, rv, hasChanges) {
  const p = $('run-state');
  const live = LIVE.includes(r.status);
  let cls = rv.state, text;
  if (live) { cls = 'live'; text = 'Running (' + r.status + '): review once it ends'; }
  else if (['merged', 'landed', 'discarded'].includes(rv.state)) {
    // "Merged into main 15:40:07 (fast-forward)"
    text = rv.state[0].toUpperCase() + rv.state.slice(1) + (rv.into && rv.state !== 'discarded' ? ' into ' + rv.into : '') +
      (rv.at ? ' ' + clock(rv.at) : '') + (rv.detail ? ' (' + rv.detail + ')' : '');
  }
  else if (!r.branch) { cls = 'none'; text = 'Finished (' + statusText(r) + '): a scratch run, nothing to merge'; }
  else if (!hasChanges) { cls = 'none'; text = 'Finished (' + statusText(r) + '): the run changed nothing'; }
  else text = 'Waiting for your review: ' + statusText(r);
  if (rv.pushed && rv.pushed.remote) {
    text += ' · pushed to ' + rv.pushed.remote + '/' + (rv.pushed.branch || '') +
      (rv.pushed.at ? ' ' + clock(rv.pushed.at) : '');
  }
  p.className = 'state state-' + cls;
  p.dataset.state = live ? 'live' : rv.state;
  p.textContent = shown(text);
  const waiting = !live && rv.state === 'waiting' && hasChanges;
  $('run-stop').hidden = !live;
  $('run-merge').hidden = !waiting;
  $('run-land').hidden = !(waiting || rv.state === 'merged');
  $('run-discard').hidden = !waiting;
  $('run-push').hidden = live || !r.branch || rv.state === 'landed' || rv.state === 'discarded' ||
    (!hasChanges && rv.state === 'waiting');
  $('run-continue').hidden = live || !r.branch || rv.state === 'landed' || rv.state === 'discarded';
}

// The diff split at each "diff --git" line: one block per file, in the files' order.
function splitPatch(patch) {
  const out = [];
  let cur = null;
  for (const line of (patch || '').split('\n')) {
    if (line.startsWith('diff ') || cur === null) { cur = []; out.push(cur); }
    cur.push(line);
  }
  if (out.length && out[out.length - 1].length === 1 && out[out.length - 1][0] === '') out.pop();
  return out;
}
function lineClass(line, inHead) {
  if (inHead) return 'd-head';
  if (line.startsWith('@@')) return 'd-hunk';
  if (line[0] === '+') return 'd-add';
  if (line[0] === '-') return 'd-del';
  if (line[0] === '\\') return 'd-note';
  return 'd-ctx';
}
function setFold(sec, open) {
  const b = sec.querySelector('.dfile-toggle');
  b.setAttribute('aria-expanded', open ? 'true' : 'false');
  sec.querySelector('.diff').hidden = !open;
  sec.classList.toggle('folded', !open);
}
function gotoFile(i) {
  const secs = document.querySelectorAll('#run-diff .dfile');
  if (!secs.length) return;
  i = Math.max(0, Math.min(secs.length - 1, i));
  state.curFile = i;
  secs.forEach((s, k) => s.classList.toggle('current', k === i));
  const b = secs[i].querySelector('.dfile-toggle');
  b.focus({ preventScroll: true });
  secs[i].scrollIntoView({ block: 'start' });
}

// The run's branch against its base: the file list and one foldable block per file.
async function loadDiff(r) {
  const files = $('run-files');
  const box = $('run-diff');
  let d = null;
  if (r.branch && !LIVE.includes(r.status)) {
    try { d = await api('/inbox/api/runs/' + encodeURIComponent(r.id) + '/diff'); } catch (e) {
      $('run-nodiff').textContent = 'No changes to show: ' + e.message;
    }
  } else $('run-nodiff').textContent = r.branch ? 'The diff shows once the run has ended.' : 'No branch (a scratch run).';
  if (state.runView !== r.id) return null;
  files.replaceChildren();
  box.replaceChildren();
  state.curFile = -1;
  const has = !!(d && d.files && d.files.length);
  $('run-nodiff').hidden = has;
  box.hidden = !has;
  if (d && !has) $('run-nodiff').textContent = 'The run changed nothing.';
  if (!has) return d;
  const chunks = splitPatch(d.patch);
  const byOrder = chunks.length === d.files.length;
  chunks.forEach((chunk, i) => {
    const f = byOrder ? d.files[i] : null;
    const name = f ? f.path : chunk[0];
    const sec = el('section', 'dfile');
    sec.id = 'dfile-' + i;
    sec.dataset.path = name;
    const head = el('div', 'dfile-head');
    const tog = el('button', 'dfile-toggle', name);
    tog.type = 'button';
    tog.setAttribute('aria-expanded', 'true');
    tog.setAttribute('aria-controls', 'dbody-' + i);
    tog.addEventListener('click', () => { setFold(sec, sec.classList.contains('folded')); state.curFile = i; });
    head.append(tog);
    if (f) head.append(el('span', 'fstat', f.status), el('span', 'ins', '+' + f.insertions), el('span', 'del', '-' + f.deletions));
    const pre = el('pre', 'diff');
    pre.id = 'dbody-' + i;
    pre.tabIndex = 0;
    let inHead = true;
    for (const line of chunk) {
      if (inHead && line.startsWith('@@')) inHead = false;
      pre.append(el('div', lineClass(line, inHead), line === '' ? ' ' : line));
    }
    sec.append(head, pre);
    box.append(sec);
    // The file list: each name goes to its file's block, unfolded.
    const li = el('li');
    const b = el('button', 'link fname', (f ? f.status + '  ' : '') + name);
    b.type = 'button';
    b.addEventListener('click', () => { setFold(sec, true); gotoFile(i); });
    li.append(b);
    if (f) li.append(el('span', 'ins', '+' + f.insertions), el('span', 'del', '-' + f.deletions));
    files.append(li);
  });
  if (d.truncated) box.append(el('p', 'd-head', '[the diff was cut at 4 MiB]'));
  return d;
}

// One journal entry of the run as a short sentence; the data's own words, as text.
function journalText(j) {
  const d = j.data && typeof j.data === 'object' ? j.data : {};
  const s = (k) => (typeof d[k] === 'string' || typeof d[k] === 'number' ? String(d[k]) : '');
  switch (j.kind) {
    case 'approval_request': return ['asked', 'approval asked: ' + s('tool') + (s('command') ? ' ' + s('command') : '') +
      (s('risk') ? ' (' + s('risk') + (s('risk_rule') ? ', ' + s('risk_rule') : '') + ')' : '')];
    case 'approval_answer': return ['answer', s('tool') + ' ' + (s('decision') === 'allow' ? 'allowed' : 'denied') + (s('by') ? ' by ' + s('by') : '') + (s('message') ? ': ' + s('message') : '')];
    case 'approval_expired': case 'approval_timeout': return ['expired', 'no answer in time: denied' + (s('reason') ? ' (' + s('reason') + ')' : '')];
    case 'approval_limit': return ['refused', 'too many questions at once: denied' + (s('reason') ? ' (' + s('reason') + ')' : '')];
    case 'run_merged': return ['merged', 'merged into ' + s('into') + (s('result') ? ' (' + s('result') + ')' : '') + (s('commit') ? ' at ' + s('commit').slice(0, 12) : '')];
    case 'run_discarded': return ['discarded', 'discarded: branch ' + s('branch') + ' deleted'];
    case 'net_deny': return ['network', 'refused ' + s('host') + (s('port') ? ':' + s('port') : '') + (s('reason') ? ': ' + s('reason') : '')];
    case 'floor_deny': case 'rule_deny': case 'floor_hit': case 'policy_deny': case 'deny_list_hit':
      return ['refused', 'refused ' + (s('command') || s('tool')) + (s('rule') ? ' (' + s('rule') + ')' : '') + (s('reason') ? ': ' + s('reason') : '')];
    case 'budget_paused': return ['budget', 'paused at its budget' + (s('limit') ? ' (' + s('limit') + ')' : '')];
    case 'budget_resumed': return ['budget', 'budget extended, the run goes on'];
    case 'sandbox_disabled': return ['refused', 'ran WITHOUT the sandbox'];
    case 'worktree_detached': return ['branch', 'worktree detached: run ' + s('by_run') + ' continues on ' + s('branch')];
    default: {
      // What else the journal holds: its plain fields, never its JSON.
      const parts = [];
      for (const k of Object.keys(d)) if (s(k) && k !== 'run_id' && k !== 'kind') parts.push(k + ' ' + s(k));
      const t = parts.join(', ');
      return [j.kind.replace(/_/g, ' '), t.length > 240 ? t.slice(0, 240) + '…' : t];
    }
  }
}

function renderTimeline(r, journal) {
  const ol = $('run-timeline');
  ol.replaceChildren();
  const items = [];
  if (r.created_at) items.push({ ts: r.created_at, kind: 'queued', ev: 'queued', text: 'run of task ' + r.task + ' queued' });
  if (r.started_at) items.push({ ts: r.started_at, kind: 'started', ev: 'started', text: 'started' + (r.sandboxed === true ? ', sandboxed' : r.sandboxed === false ? ', NOT sandboxed' : '') });
  for (const j of journal) {
    const t = journalText(j);
    items.push({ ts: j.ts, kind: j.kind, ev: t[0], text: t[1] });
  }
  if (r.ended_at) items.push({ ts: r.ended_at, kind: 'ended', ev: 'ended', text: statusText(r) });
  items.sort((a, b) => (Date.parse(a.ts) || 0) - (Date.parse(b.ts) || 0));
  $('run-notime').hidden = items.length > 0;
  for (const it of items) {
    const li = el('li', 'tl-' + it.ev.replace(/[^a-z]/g, ''));
    li.dataset.kind = it.kind;
    li.append(timeEl(it.ts), el('span', 'ev', it.ev), el('span', 'txt', it.text));
    ol.append(li);
  }
}

// The summary: what was asked, what it did, what it cost and took, who answered, where
// it connected, which automation files it touched.
function renderSummary(r, sum, journal, diff) {
  const dl = $('run-facts');
  dl.replaceChildren();
  const rep = r.report || {};
  const t = state.tasks[r.task];
  const block = (text) => { const b = el('div', 'asked', text); return b; };
  if (sum && typeof sum.asked === 'string') factNode(dl, 'Asked', block(sum.asked));
  fact(dl, 'Task', r.task + (t ? ' · ' + t.engine : ''));
  fact(dl, 'Status', statusText(r));
  const did = [];
  if (typeof rep.result === 'string') did.push(rep.result);
  else if (typeof rep.exit_code === 'number') did.push('the command exited ' + rep.exit_code);
  const ds = rep.git && rep.git.diffstat;
  if (ds) did.push(ds.files_changed + (ds.files_changed === 1 ? ' file' : ' files') + ' changed, +' + ds.insertions + ' −' + ds.deletions);
  else if (diff && diff.files) did.push(diff.files.length + ' files changed');
  if (did.length) factNode(dl, 'What it did', block(did.join('\n')));
  const sp = r.spent || {};
  const b = rep.budget || {};
  fact(dl, 'Cost', spentMoney(sp) + ', ' + turns(sp.turns) +
    (b.dollars ? ' (budget ' + money(b.dollars) + ', ' + turns(b.turns) + ')' : '') +
    (rep.cost_unknown ? ' · cost unknown: ' + rep.cost_unknown : ''));
  if (r.started_at && r.ended_at) {
    fact(dl, 'Time', duration((Date.parse(r.ended_at) - Date.parse(r.started_at)) / 1000) + ', ' +
      clock(r.started_at) + ' – ' + clock(r.ended_at) + (b.paused_seconds ? ' (paused ' + duration(b.paused_seconds) + ')' : ''));
  } else fact(dl, 'Time', (sp.seconds || 0).toFixed(1) + ' s so far');
  // Approvals: asked, and how each ended, from the run's journal.
  let asked = 0, allowed = 0, denied = 0, expired = 0;
  for (const j of journal) {
    if (j.kind === 'approval_request') asked++;
    else if (j.kind === 'approval_answer') { if (j.data && j.data.decision === 'allow') allowed++; else denied++; }
    else if (j.kind === 'approval_expired' || j.kind === 'approval_timeout') expired++;
  }
  if (!asked && rep.approvals && rep.approvals.count) asked = rep.approvals.count;
  fact(dl, 'Approvals', asked === 0 ? 'none asked' : asked + ' asked: ' + allowed + ' allowed, ' + denied +
    ' denied' + (expired ? ', ' + expired + ' unanswered (denied)' : ''));
  const eng = rep.engine;
  if (eng && eng.approvals) fact(dl, 'Who answers', eng.approvals);
  // Network: the mode, and each host the run reached or was refused.
  const hosts = (sum && Array.isArray(sum.hosts)) ? sum.hosts : [];
  const net = el('div');
  net.append(el('div', '', 'network ' + (typeof rep.network === 'string' ? rep.network : 'unknown') +
    (hosts.length ? '' : ': no connection')));
  if (hosts.length) {
    const ul = el('ul', 'hosts');
    for (const h of hosts) {
      const li = el('li', h.denied && !h.allowed ? 'denied' : '');
      const hp = (String(h.host).includes(':') ? '[' + h.host + ']' : h.host) + ':' + h.port;
      li.append(el('code', '', hp), ' ' + [h.allowed ? h.allowed + ' allowed' : '', h.denied ? h.denied + ' refused' : '']
        .filter(Boolean).join(', '));
      ul.append(li);
    }
    net.append(ul);
  }
  if (sum && (sum.hosts_omitted || sum.hosts_incomplete)) net.append(el('div', 'muted', 'more hosts than listed'));
  factNode(dl, 'Network hosts', net);
  const git = rep.git || {};
  state.runAuto = Array.isArray(git.automation) ? git.automation : [];
  if (state.runAuto.length) {
    const ul = el('ul', 'autofiles');
    for (const f of state.runAuto) ul.append(el('li', '', f.status + ' ' + f.path + ' (' + f.what + ')'));
    const box = el('div');
    box.append(ul, el('div', 'muted', 'held back in the worktree; merging asks you to confirm them'));
    factNode(dl, 'Automation files', box);
  } else fact(dl, 'Automation files', 'none touched');
  if (typeof git.quarantine === 'string') {
    fact(dl, 'Not imported', (git.error || '') + ' — kept, untrusted and inert, in ' + git.quarantine +
      ' (a bundle and plain files; see its README.txt)');
  }
  fact(dl, 'Sandboxed', r.sandboxed === true ? 'yes' : r.sandboxed === false ? 'NO' : 'unknown');
  if (eng) fact(dl, 'Floor', eng.floor);
  fact(dl, 'Branch', r.branch);
}
function factNode(dl, k, node) { const dd = el('dd'); dd.append(node); dl.append(el('dt', '', k), dd); }

// A command for the person's own terminal: the daemon does not hold their git
// credentials (push), and the Inbox does not start follow-ups of its own (continue).
function showCommand(kind, id) {
  const box = $('run-cmd');
  const prompt = $('run-cmd-prompt');
  const update = () => {
    $('run-cmd-text').textContent = kind === 'push' ? 'cwctl run push ' + id :
      'cwctl run continue ' + id + ' --prompt ' + shq(prompt.value.trim() || 'What to do next');
  };
  box.dataset.kind = kind;
  $('run-cmd-why').textContent = kind === 'push' ?
    'Push sends the branch with your own git and credentials, which the daemon does not hold: run this in a terminal.' :
    'Continue starts a new run on this run\'s branch with your follow-up; run this in a terminal.';
  prompt.hidden = $('run-cmd-label').hidden = kind !== 'continue';
  prompt.oninput = update;
  update();
  box.hidden = false;
  if (kind === 'continue') prompt.focus(); else $('run-cmd-copy').focus();
}
async function copyCommand() {
  const text = $('run-cmd-text').textContent;
  try { await navigator.clipboard.writeText(text); $('run-result').textContent = 'Copied: ' + text; } catch (e) {
    const sel = window.getSelection();
    const rg = document.createRange();
    rg.selectNodeContents($('run-cmd-text'));
    sel.removeAllRanges();
    sel.addRange(rg);
    $('run-result').textContent = 'Selected: copy it with Ctrl+C';
  }
}

async function runAction(what, id) {
  const btns = ['run-stop', 'run-merge', 'run-land', 'run-discard'].map($);
  btns.forEach((b) => { b.disabled = true; });
  try {
    // A run that changes automation files (SPEC U3) lands only after the person has
    // been shown their names and confirmed; the daemon refuses it otherwise.
    const lands = what === 'merge' || what === 'land';
    let body = lands ? {} : null;
    const auto = lands ? (state.runAuto || []) : [];
    if (auto.length) {
      const names = auto.map((f) => '  ' + f.status + ' ' + f.path + ' (' + f.what + ')').join('\n');
      if (!window.confirm('Run ' + id + ' changes automation files: tools run them when a checkout ' +
          'is opened (Claude Code hooks, direnv, editors, CI, git hooks).\n\n' + names +
          '\n\nRead the diff first. Merge them into your checkout?')) {
        btns.forEach((b) => { b.disabled = false; });
        $('run-result').textContent = 'Not merged: the automation files were not accepted';
        return;
      }
      body = { accept_automation: true };
    }
    const r = await post('/inbox/api/runs/' + encodeURIComponent(id) + '/' + what, body);
    $('run-result').textContent = what === 'merge' ? (r.result === 'up-to-date' ?
      r.into + ' already has run ' + id : 'Merged run ' + id + ' into ' + r.into + ' (' + r.result + ')') :
      what === 'land' ? 'Landed run ' + id + (r.into ? ' in ' + r.into : '') + (r.result ? ' (' + r.result + ')' : '') :
      what === 'discard' ? 'Discarded run ' + id + ' and its branch' : 'Stopping run ' + id;
  } catch (e) {
    $('run-result').textContent = 'Could not ' + what + ' run ' + id + ': ' + e.message +
      (what === 'land' && /HTTP 40[45]|no such|not found/i.test(e.message) ?
        ' (this clockworkd has no land yet: Merge, then Discard)' : '');
  }
  btns.forEach((b) => { b.disabled = false; });
  $('run-discard').textContent = 'Discard';
  $('run-land').textContent = 'Land';
  state.diffOf = null;
  refresh();
}

// Discard and Land ask twice, on the page itself (no dialog): the branch goes.
function twice(b, label, fn) {
  if (b.textContent !== label + ': click again to confirm') { b.textContent = label + ': click again to confirm'; return; }
  fn();
}

function fact(dl, k, v) { dl.append(el('dt', '', k), el('dd', '', v === null || v === undefined ? '–' : v)); }

async function loadRunView() {
  const id = state.runView;
  if (!id) return;
  let r, journal = [];
  try {
    const got = await Promise.all([api('/inbox/api/runs/' + encodeURIComponent(id)),
      api('/inbox/api/journal?run=' + encodeURIComponent(id))]);
    r = got[0];
    journal = (got[1] && got[1].entries) || [];
  } catch (e) { setStatus(e.message); return; }
  if (state.runView !== id) return;
  $('run-id').textContent = r.id;
  $('run-report').textContent = r.report ? shown(JSON.stringify(r.report, null, 2)) : '(no report yet)';
  // The diff and the summary once per state of the run (they change when it ends).
  const key = r.id + ' ' + r.status;
  if (state.diffOf !== key) {
    state.diffOf = key;
    state.runDiff = await loadDiff(r);
    state.runSum = null;
    try { state.runSum = await api('/inbox/api/runs/' + encodeURIComponent(id) + '/summary'); } catch (e) { state.runSum = null; }
    if (state.runView !== id) return;
  }
  const d = state.runDiff;
  renderSummary(r, state.runSum, journal, d);
  renderTimeline(r, journal);
  renderState(r, reviewOf(r, journal), !!(d && d.files && d.files.length));
  $('run-export').href = '/workforce/runs/' + encodeURIComponent(r.id) + '/proof-of-work';
}

// Keyboard shortcuts on the run page. Never inside a field, never with a modifier
// (the browser's own shortcuts stay), and m/l ask before they act.
function onKey(e) {
  if (!state.runView || $('run').hidden || e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
  const t = e.target;
  if (t && t.closest && t.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]')) return;
  const id = state.runView;
  const can = (b) => !$(b).hidden && !$(b).disabled;
  const n = document.querySelectorAll('#run-diff .dfile').length;
  switch (e.key) {
    case 'j': if (n) gotoFile(state.curFile + 1); break;
    case 'k': if (n) gotoFile(state.curFile < 0 ? 0 : state.curFile - 1); break;
    case 'o': {
      const sec = document.querySelectorAll('#run-diff .dfile')[state.curFile < 0 ? 0 : state.curFile];
      if (sec) setFold(sec, sec.classList.contains('folded'));
      break;
    }
    case 'm':
      if (can('run-merge') && window.confirm('Merge run ' + id + ' into its repository?')) runAction('merge', id);
      break;
    case 'l':
      if (can('run-land') && window.confirm('Land run ' + id + ': merge it, then delete its branch and worktree?')) runAction('land', id);
      break;
    case 'p': if (can('run-push')) showCommand('push', id); break;
    case 'c': if (can('run-continue')) showCommand('continue', id); break;
    case '?': $('run-help').hidden = !$('run-help').hidden; break;
    case 'Escape':
      if (!$('run-help').hidden) $('run-help').hidden = true;
      else { location.hash = ''; }
      break;
    default: return;
  }
  e.preventDefault();
}

// One transcript entry (common/transcript.h) as a line of text; never HTML.
function entryText(e) {
  const cut = e.cut ? ' [... ' + e.cut + ' bytes more]' : '';
  switch (e.k) {
    case 'text': return ['agent', e.text + cut];
    case 'tool': return ['tool', e.tool + '  ' + (e.command || e.path || e.detail || '') + cut];
    case 'result': return [e.error ? 'error' : 'result', e.text + cut];
    case 'floor': return ['floor', 'refused ' + e.command + ' (' + e.rule + '): ' + e.reason];
    case 'ask': return ['waiting', 'approval ' + e.approval + ': ' + e.tool + (e.command ? ' ' + e.command : '')];
    case 'answer': return ['answer', 'approval ' + e.approval + (e.decision === 'allow' ? ' allowed' : ' denied') +
      (e.by ? ' by ' + e.by : '') + (e.reason ? ': ' + e.reason : '')];
    case 'final': return [e.error ? 'failed' : 'final', e.text + cut];
    case 'usage': return ['usage', (Number(e.dollars) < 0 ? '' : '$' + Number(e.dollars).toFixed(4) + ', ') + e.turns + (e.turns === 1 ? ' turn' : ' turns') + (Number(e.dollars) < 0 ? ' (no cost reported)' : '')];
    case 'note': return ['note', e.text];
    default: return null;
  }
}

// Follow the readable transcript: read from the last offset to its end. It is read
// again when the stream says the run wrote (a "log", "approval" or "run" event of
// this run), never on a timer; one read at a time, a read asked for meanwhile follows.
async function followLog() {
  const id = state.runView;
  if (!id) return;
  if (state.logBusy) { state.logAgain = true; return; }
  state.logBusy = true;
  let done = false;
  try {
    for (;;) {
      const base = '/inbox/api/runs/' + encodeURIComponent(id);
      let c = await api(base + (state.rawLog ? '/log' : '/transcript') + '?offset=' + state.logOffset);
      if (state.runView !== id) return;
      const pre = $('run-log');
      const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      // A command run has no transcript of its own: its log is shown as text.
      if (c.raw) { state.rawLog = true; continue; }
      if (state.rawLog) {
        if (c.data) pre.append(c.data);
        if (atEnd) pre.scrollTop = pre.scrollHeight;
        state.logOffset = c.next;
        done = c.done;
        if (!c.data) break;
        continue;
      }
      for (const e of c.entries || []) {
        const t = entryText(e);
        if (!t) continue;
        const line = document.createElement('div');
        line.className = 'tr tr-' + t[0];
        const tag = document.createElement('span');
        tag.className = 'tr-tag';
        tag.textContent = t[0];
        line.append(tag, ' ', t[1]);
        pre.append(line);
      }
      if (atEnd) pre.scrollTop = pre.scrollHeight;
      state.logOffset = c.next;
      done = c.done;
      if (!c.entries || c.entries.length === 0) break;
    }
  } catch (e) { setStatus(e.message); } finally {
    state.logBusy = false;
    // Asked for meanwhile: this run's newer lines, or another run's page opened.
    if (state.logAgain) { state.logAgain = false; followLog(); }
  }
  if (done && state.runView === id) loadRunView();
}

function route() {
  const m = /^#run\/([A-Za-z0-9._-]+)$/.exec(location.hash);
  const id = m ? m[1] : null;
  if (id === state.runView) return;
  state.runView = id;
  state.diffOf = null;
  state.logOffset = 0;
  state.rawLog = false;
  state.curFile = -1;
  $('run-result').textContent = '';
  $('run-log').textContent = '';
  $('run-report').textContent = '';
  $('run-cmd').hidden = true;
  $('run-help').hidden = true;
  if (!state.csrf) return;
  $('run').hidden = !id;
  if (id) { loadRunView(); followLog(); $('run-close').focus(); }
}

const PARTS = ['tasks', 'runs', 'approvals', 'journal', 'jobs', 'run'];

// Read again what parts name (all of them when none): the lists from the gateway, and
// 'run' the open run page. Only what was read is drawn again, so an event about a
// run's log does not redraw the approval cards (and a message being typed on one).
async function refresh(parts) {
  const want = parts || new Set(PARTS);
  if (state.busy) { for (const p of want) state.pending.add(p); return; }
  state.busy = true;
  try {
    const paths = { tasks: '/inbox/api/tasks', runs: '/inbox/api/runs?limit=50',
      approvals: '/inbox/api/approvals', journal: '/inbox/api/journal',
      jobs: '/inbox/api/jobs?preview=1' };
    const keys = Object.keys(paths).filter((k) => want.has(k));
    const vals = await Promise.all(keys.map((k) => api(paths[k])));
    const got = {};
    keys.forEach((k, i) => { got[k] = vals[i]; });
    if (got.jobs) state.jobs = got.jobs.jobs;
    if (got.tasks) {
      state.tasks = {};
      for (const t of got.tasks.tasks) state.tasks[t.name] = t;
    }
    if (got.runs) state.runs = got.runs.runs;
    if (got.approvals) state.approvals = got.approvals.approvals;
    if (got.journal) state.journal = got.journal.entries;
    // The cards name each run's task and deadline; the run table each task's engine.
    if (got.approvals || got.runs || got.tasks) renderApprovals();
    if (got.jobs) renderJobs();
    if (got.runs || got.tasks) renderRuns();
    if (got.tasks) renderTasks();
    if (got.journal) renderJournal();
    for (const s of ['approvals', 'jobs', 'runs', 'tasks', 'journal']) $(s).hidden = false;
    $('signin').hidden = true;
    if (state.runView && want.has('run')) { $('run').hidden = false; loadRunView(); }
    setStatus('Up to date · ' + new Date().toLocaleTimeString());
  } catch (e) {
    if (state.csrf) setStatus('Could not refresh: ' + e.message);
  } finally {
    state.busy = false;
    if (state.pending.size) {
      const next = new Set(state.pending);
      state.pending.clear();
      refresh(next);
    }
  }
}

// Mark parts of the page as changed; they are read again together, at most once per
// FLUSH_MS, so a run that prints a thousand lines costs a few reads, not a thousand.
const FLUSH_MS = 100;
function touch(...parts) {
  for (const p of parts) state.dirty.add(p);
  if (state.flushTimer === null) state.flushTimer = setTimeout(flush, FLUSH_MS);
}
function flush() {
  state.flushTimer = null;
  const parts = new Set(state.dirty);
  state.dirty.clear();
  const log = parts.delete('log');
  if (parts.size) refresh(parts);
  if (log) followLog();
}

// One event from the stream (daemon/events.c): what it concerns is read again.
function onEvent(type, ev) {
  let e = null;
  try { e = JSON.parse(ev.data); } catch (x) { return; }
  const mine = !!(state.runView && e && e.run === state.runView);
  switch (type) {
    case 'run': case 'budget':
      touch('runs');
      if (mine) touch('run', 'log');
      break;
    case 'approval':
      touch('approvals');
      if (mine) touch('log');
      break;
    case 'log':
      if (mine) touch('log');
      break;
    case 'journal':
      touch('journal');
      // The run page's timeline and state come from its journal too.
      if (mine) touch('run');
      break;
    case 'task': touch('tasks', 'jobs'); break;
    // Events were lost (the stream's buffer passed them by): read everything.
    case 'gap': touch(...PARTS, 'log'); break;
  }
}

// Live updates: the daemon pushes each change as it is stored. EventSource comes back
// by itself after a dropped stream or a "cutoff", with Last-Event-ID, and the daemon
// replays what it missed; on each (re)open the page reads everything once anyway.
function listen() {
  const es = new EventSource('/inbox/api/events');
  state.es = es;
  for (const t of ['run', 'approval', 'log', 'journal', 'budget', 'task', 'gap'])
    es.addEventListener(t, (ev) => onEvent(t, ev));
  let opened = false;
  es.onopen = () => { if (opened) touch(...PARTS, 'log'); opened = true; };
  es.addEventListener('signedout', () => { es.close(); state.es = null; signedOut(); });
  // EventSource gives up on an answer that is not a stream (a 401 after the session
  // ended, a 503 at the daemon's stream limit): ask the session, then listen again.
  es.onerror = () => {
    if (es.readyState !== EventSource.CLOSED || state.es !== es) return;
    state.es = null;
    setTimeout(async () => {
      try {
        const r = await fetch('/inbox/session', { credentials: 'same-origin', cache: 'no-store' });
        if (r.status === 401) { signedOut(); return; }
      } catch (e) { /* the daemon is away: try again */ }
      if (state.csrf && !state.es) { listen(); touch(...PARTS, 'log'); }
    }, 5000);
  };
}

function tickDeadlines() {
  for (const s of document.querySelectorAll('.left[data-deadline]')) {
    s.textContent = left(s.dataset.deadline || null);
    s.classList.toggle('soon', !!soon(s.dataset.deadline));
  }
}

async function start() {
  let s;
  try {
    const r = await fetch('/inbox/session', { credentials: 'same-origin', cache: 'no-store' });
    if (r.status !== 200) { signedOut(); return; }
    s = await r.json();
  } catch (e) { signedOut(); return; }
  state.csrf = s.csrf;
  $('run-close').addEventListener('click', () => { location.hash = ''; $('h-runs').focus(); });
  $('run-stop').addEventListener('click', () => runAction('stop', state.runView));
  $('run-merge').addEventListener('click', () => runAction('merge', state.runView));
  $('run-land').addEventListener('click', (ev) => twice(ev.currentTarget, 'Land', () => runAction('land', state.runView)));
  $('run-discard').addEventListener('click', (ev) => twice(ev.currentTarget, 'Discard', () => runAction('discard', state.runView)));
  $('run-push').addEventListener('click', () => showCommand('push', state.runView));
  $('run-continue').addEventListener('click', () => showCommand('continue', state.runView));
  $('run-cmd-copy').addEventListener('click', copyCommand);
  $('run-keys').addEventListener('click', () => { $('run-help').hidden = !$('run-help').hidden; });
  document.addEventListener('keydown', onKey);
  window.addEventListener('hashchange', route);
  // The stream first: a change made while the page reads its first state is not lost.
  listen();
  await refresh();
  route();
  // Only the page's own clock: the "N s left" of each card. Nothing here asks the daemon.
  setInterval(tickDeadlines, 1000);
}

document.addEventListener('DOMContentLoaded', start);
