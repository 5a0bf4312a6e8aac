// The Inbox page. Everything it shows comes from /inbox/api/..., authorised by the
// session cookie; answers carry the per-session CSRF token in a header. The DOM is
// built with textContent only, never parsed as HTML: run output is untrusted text.
'use strict';

const state = { csrf: null, tasks: {}, runs: [], approvals: [], journal: [],
  runView: null, logOffset: 0, logTimer: null, busy: false, again: false };

function $(id) { return document.getElementById(id); }
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
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

function signedOut() {
  state.csrf = null;
  for (const s of ['approvals', 'runs', 'journal', 'run']) $(s).hidden = true;
  for (const s of ['approval-list', 'journal-list']) $(s).replaceChildren();
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

async function answer(a, allow, msgInput, buttons) {
  buttons.forEach((b) => { b.disabled = true; });
  const body = { decision: allow ? 'allow' : 'deny' };
  if (msgInput.value.trim() !== '') body.message = msgInput.value.trim();
  try {
    await api('/inbox/api/approvals/' + encodeURIComponent(a.id), {
      method: 'POST', body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': state.csrf } });
    setStatus((allow ? 'Approved ' : 'Denied ') + a.tool + ' in run ' + a.run_id);
  } catch (e) {
    setStatus('Could not answer: ' + e.message);
  }
  refresh();
}

function renderApprovals() {
  const ul = $('approval-list');
  ul.replaceChildren();
  $('n-approvals').textContent = state.approvals.length ? String(state.approvals.length) : '';
  // The tab's title carries the count, so a waiting approval shows in a background tab.
  document.title = (state.approvals.length ? '(' + state.approvals.length + ') ' : '') +
    'Clockwork Inbox';
  $('no-approvals').hidden = state.approvals.length > 0;
  for (const a of state.approvals) {
    const li = el('li', 'card');
    li.dataset.approval = a.id;
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
    const yes = el('button', 'approve', 'Approve');
    const no = el('button', 'deny', 'Deny');
    yes.type = no.type = 'button';
    yes.addEventListener('click', () => answer(a, true, msg, [yes, no]));
    no.addEventListener('click', () => answer(a, false, msg, [yes, no]));
    act.append(msg, yes, no);
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
    tr.append(el('td', 'st-' + r.status, r.status + (r.exit_reason ? ' (' + r.exit_reason + ')' : '')));
    const t = state.tasks[r.task];
    tr.append(el('td', '', t ? t.engine : '?'));
    tr.append(el('td', r.sandboxed === false ? 'no' : '',
      r.sandboxed === true ? 'yes' : r.sandboxed === false ? 'NO' : '–'));
    const sp = r.spent || {};
    tr.append(el('td', '', '$' + (sp.dollars || 0).toFixed(2) + ' · ' + (sp.turns || 0) +
      ' turns · ' + Math.round(sp.seconds || 0) + ' s'));
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

function fact(dl, k, v) { dl.append(el('dt', '', k), el('dd', '', v === null || v === undefined ? '–' : v)); }

async function loadRunView() {
  const id = state.runView;
  if (!id) return;
  let r;
  try { r = await api('/inbox/api/runs/' + encodeURIComponent(id)); } catch (e) { setStatus(e.message); return; }
  $('run-id').textContent = r.id;
  const dl = $('run-facts');
  dl.replaceChildren();
  fact(dl, 'Task', r.task);
  fact(dl, 'Status', r.status + (r.exit_reason ? ' (' + r.exit_reason + ')' : ''));
  const t = state.tasks[r.task];
  fact(dl, 'Engine', t ? t.engine : '?');
  fact(dl, 'Sandboxed', r.sandboxed === true ? 'yes' : r.sandboxed === false ? 'NO' : 'unknown');
  const sp = r.spent || {};
  fact(dl, 'Spent', '$' + (sp.dollars || 0).toFixed(4) + ', ' + (sp.turns || 0) + ' turns, ' + (sp.seconds || 0).toFixed(1) + ' s');
  fact(dl, 'Branch', r.branch);
  // How this engine's run was contained: the report says, from the engine table.
  const eng = r.report && r.report.engine;
  if (eng) {
    fact(dl, 'Floor', eng.floor);
    fact(dl, 'Approvals', eng.approvals);
  }
  if (r.report && typeof r.report.result === 'string') fact(dl, 'Result', r.report.result);
  $('run-report').textContent = r.report ? JSON.stringify(r.report, null, 2) : '(no report yet)';
  $('run-export').href = '/workforce/runs/' + encodeURIComponent(r.id) + '/proof-of-work';
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
    case 'usage': return ['usage', '$' + Number(e.dollars).toFixed(4) + ', ' + e.turns + (e.turns === 1 ? ' turn' : ' turns')];
    case 'note': return ['note', e.text];
    default: return null;
  }
}

// Follow the readable transcript: read from the last offset until the daemon says done.
async function followLog() {
  const id = state.runView;
  clearTimeout(state.logTimer);
  if (!id) return;
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
  } catch (e) { setStatus(e.message); }
  if (!done) state.logTimer = setTimeout(followLog, 1000);
  else loadRunView();
}

function route() {
  const m = /^#run\/([A-Za-z0-9._-]+)$/.exec(location.hash);
  const id = m ? m[1] : null;
  if (id === state.runView) return;
  state.runView = id;
  state.logOffset = 0;
  state.rawLog = false;
  $('run-log').textContent = '';
  $('run-report').textContent = '';
  if (!state.csrf) return;
  $('run').hidden = !id;
  if (id) { loadRunView(); followLog(); $('run-close').focus(); }
}

async function refresh() {
  if (state.busy) { state.again = true; return; }
  state.busy = true;
  try {
    const [tasks, runs, approvals, journal] = await Promise.all([
      api('/inbox/api/tasks'), api('/inbox/api/runs?limit=50'),
      api('/inbox/api/approvals'), api('/inbox/api/journal')]);
    state.tasks = {};
    for (const t of tasks.tasks) state.tasks[t.name] = t;
    state.runs = runs.runs;
    state.approvals = approvals.approvals;
    state.journal = journal.entries;
    renderApprovals(); renderRuns(); renderJournal();
    for (const s of ['approvals', 'runs', 'journal']) $(s).hidden = false;
    $('signin').hidden = true;
    if (state.runView) { $('run').hidden = false; loadRunView(); }
    setStatus('Up to date · ' + new Date().toLocaleTimeString());
  } catch (e) {
    if (state.csrf) setStatus('Could not refresh: ' + e.message);
  } finally {
    state.busy = false;
    if (state.again) { state.again = false; refresh(); }
  }
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
  window.addEventListener('hashchange', route);
  await refresh();
  route();
  // Live updates: the daemon sends one event per change; a slow poll covers a dropped stream.
  const es = new EventSource('/inbox/events');
  es.onmessage = () => refresh();
  es.addEventListener('signedout', () => { es.close(); signedOut(); });
  setInterval(refresh, 15000);
  setInterval(tickDeadlines, 1000);
}

document.addEventListener('DOMContentLoaded', start);
