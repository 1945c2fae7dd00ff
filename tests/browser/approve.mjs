// approve.mjs - a human approves an escalated intent in a real browser.
//
// Debian's chromium, driven by playwright-core (no browser is downloaded),
// against a dev-mode PDP that run.sh started. The agent's side uses Node's
// fetch with the agent token.
//   1. An agent's refund of 500 escalates. The approver signs in at
//      /ui/login, opens the request from the list, sees the amount and the
//      intent hash the agent was given, comments and approves; the agent's
//      long-poll (started before the click) returns ALLOWED with a grant.
//   2. A refund whose params carry "<script>alert(1)</script>" is shown as
//      that literal text: no dialog opens, no script element exists. The
//      approver denies it and the agent sees BLOCKED.
//   3. A page left open after the request was decided elsewhere: the vote
//      is refused and the page says so in #error.
// Screenshots go to IG_ARTIFACTS. Prints "browser: N passed, M failed";
// exits 1 when anything failed, 2 when the environment is incomplete.
//
// Environment: INTENTGATE_URL, INTENTGATE_AGENT_TOKEN,
// INTENTGATE_APPROVER_ID, INTENTGATE_APPROVER_PASSWORD; optional
// IG_ARTIFACTS (default .), CHROMIUM (default /usr/bin/chromium).
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

function need(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`approve.mjs: ${name} is not set`);
    process.exit(2);
  }
  return v;
}

const BASE = need('INTENTGATE_URL');
const AGENT_TOKEN = need('INTENTGATE_AGENT_TOKEN');
const APPROVER = need('INTENTGATE_APPROVER_ID');
const PASSWORD = need('INTENTGATE_APPROVER_PASSWORD');
const ARTIFACTS = process.env.IG_ARTIFACTS || '.';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const XSS = '<script>alert(1)</script>';

mkdirSync(ARTIFACTS, { recursive: true });
// Nothing here may hang the test run.
setTimeout(() => {
  console.error('FAIL: approve.mjs took longer than 150 s');
  process.exit(1);
}, 150_000).unref();

let passed = 0;
let failed = 0;
function check(name, cond, detail) {
  if (cond) {
    passed++;
  } else {
    failed++;
    console.error(`FAIL: ${name}${detail !== undefined ? ': ' + detail : ''}`);
  }
}

// ---- the agent ----

async function agent(method, p, body, timeoutMs = 30_000) {
  const res = await fetch(BASE + p, {
    method,
    headers: {
      Authorization: `Bearer ${AGENT_TOKEN}`,
      'Content-Type': 'application/json',
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // left null: the checks below say what was expected
  }
  return { status: res.status, json, text };
}

// Submit a refund that must escalate; returns the agent's answer.
async function refund(order, amount, extra = {}) {
  const params = { amount, currency: 'EUR', order_id: order, ...extra };
  const r = await agent('POST', '/v1/intents', {
    action: 'payments.refund',
    resource: `orders/${order}`,
    params,
  });
  const ok = (r.status === 200 || r.status === 201) && r.json?.decision === 'ESCALATE';
  check(`refund ${order} escalates`, ok, `HTTP ${r.status} ${r.text.slice(0, 300)}`);
  if (!ok || !r.json.approval?.id || !r.json.intent_hash)
    throw new Error(`refund ${order} did not escalate`);
  return r.json;
}

async function approverVote(approvalId, vote, intentHash) {
  const login = await fetch(`${BASE}/v1/approver/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ approver: APPROVER, password: PASSWORD }),
  });
  const { token } = await login.json();
  const res = await fetch(`${BASE}/v1/approvals/${approvalId}/votes`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ vote, intent_hash: intentHash, comment: 'decided over the API' }),
  });
  await fetch(`${BASE}/v1/approver/logout`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
  });
  return res.status;
}

// ---- the browser ----

function pathOf(page) {
  return new URL(page.url()).pathname;
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

async function signIn(page) {
  const res = await page.goto(`${BASE}/ui/login`);
  check('login page loads', res && res.status() === 200, res && res.status());
  await shot(page, '01-login');
  await page.fill('input#approver', APPROVER);
  await page.fill('input#password', PASSWORD);
  await Promise.all([
    page.waitForURL((u) => new URL(u).pathname === '/ui/approvals', { timeout: 10_000 }),
    page.click('button#login'),
  ]);
  check('signed in: on /ui/approvals', pathOf(page) === '/ui/approvals', page.url());
}

// Open approval id from the list page; returns the detail page's response.
async function openFromList(page, id) {
  await page.goto(`${BASE}/ui/approvals`);
  const link = page.locator(`a.approval-link[href$="/ui/approvals/${id}"]`);
  check(`the list links to ${id}`, (await link.count()) === 1, await link.count());
  await Promise.all([
    page.waitForURL((u) => new URL(u).pathname === `/ui/approvals/${id}`, { timeout: 10_000 }),
    link.first().click(),
  ]);
}

async function text(page, sel) {
  const loc = page.locator(sel);
  if ((await loc.count()) !== 1) return null;
  return (await loc.textContent()) ?? '';
}

// Case 1: approve a refund of 500; the agent's long-poll wakes up ALLOWED.
let approvedIntent = null; // for the audit case

async function caseApprove(page) {
  const ans = await refund('ord_9', 500);
  const id = ans.approval.id;
  approvedIntent = ans.intent_id;
  await signIn(page);
  await shot(page, '02-list');
  await openFromList(page, id);

  const params = await text(page, '#params');
  let shown = null;
  try {
    shown = JSON.parse(params);
  } catch {
    // checked below
  }
  check('#params is the params as JSON', shown !== null, params);
  check('#params shows the amount 500', shown?.amount === 500 && /\b500\b/.test(params), params);
  check('#params shows the order', shown?.order_id === 'ord_9', params);
  check(
    '#intent-hash is the hash the agent got',
    (await text(page, '#intent-hash'))?.trim() === ans.intent_hash,
    `${await text(page, '#intent-hash')} != ${ans.intent_hash}`,
  );
  check('#status says PENDING', /PENDING/.test((await text(page, '#status')) ?? ''), await text(page, '#status'));
  await shot(page, '03-detail');

  // The agent waits for the decision before the human clicks.
  const t0 = Date.now();
  const poll = agent('GET', `/v1/intents/${ans.intent_id}?wait=20`, undefined, 40_000);
  await new Promise((r) => setTimeout(r, 300));
  await page.fill('textarea#comment', 'Checked against ticket T-9: refund is due.');
  await Promise.all([page.waitForLoadState('load'), page.click('button#approve')]);
  await page.locator('#flash').waitFor({ state: 'visible', timeout: 10_000 });
  check('#flash after the vote', ((await text(page, '#flash')) ?? '').trim().length > 0);
  check('no #error after the vote', (await page.locator('#error').count()) === 0, await text(page, '#error'));
  check('#status says APPROVED', /APPROVED/.test((await text(page, '#status')) ?? ''), await text(page, '#status'));
  check(
    'the comment is shown with the vote',
    (await page.content()).includes('Checked against ticket T-9'),
  );
  await shot(page, '04-after-approve');

  const got = await poll;
  const waited = Date.now() - t0;
  check('long-poll answers 200', got.status === 200, `HTTP ${got.status} ${got.text.slice(0, 300)}`);
  check('the agent sees ALLOWED', got.json?.state === 'ALLOWED', got.json?.state);
  check('with a grant', got.json?.grant != null, got.text.slice(0, 300));
  check('the long-poll woke on the vote, not its timeout', waited < 15_000, `${waited} ms`);
}

// Case 2: params holding a script tag are shown as text, never run.
async function caseScript(page, dialogs) {
  const ans = await refund('ord_10', 300, { note: XSS });
  const id = ans.approval.id;
  const res = await page.goto(`${BASE}/ui/approvals/${id}`);
  const html = res ? await res.text() : '';
  check('the page source escapes the note', !html.includes(XSS) && html.includes('&lt;script&gt;'), html.length);
  await page.waitForTimeout(500); // time for any script to have fired
  await shot(page, '05-script-in-params');
  const params = await text(page, '#params');
  check('#params shows the script tag as text', (params ?? '').includes(XSS), params);
  const scripts = await page.evaluate(() => document.getElementsByTagName('script').length);
  check('no script element in the DOM', scripts === 0, scripts);
  check('no dialog opened', dialogs.length === 0, JSON.stringify(dialogs));

  // The list shows it too, without running anything.
  await openFromList(page, id);
  check('still no dialog', dialogs.length === 0, JSON.stringify(dialogs));

  await page.fill('textarea#comment', `no: ${XSS}`);
  await Promise.all([page.waitForLoadState('load'), page.click('button#deny')]);
  await page.locator('#flash').waitFor({ state: 'visible', timeout: 10_000 });
  check('#status says DENIED', /DENIED/.test((await text(page, '#status')) ?? ''), await text(page, '#status'));
  check('no script element after the vote', (await page.evaluate(() => document.getElementsByTagName('script').length)) === 0);
  const st = await agent('GET', `/v1/intents/${ans.intent_id}`);
  check('the agent sees BLOCKED', st.json?.state === 'BLOCKED', st.text.slice(0, 300));
}

// Case 3: a vote from a page opened before the request was decided.
async function caseStale(page) {
  const ans = await refund('ord_11', 250);
  const id = ans.approval.id;
  await page.goto(`${BASE}/ui/approvals/${id}`);
  check('the vote form is there', (await page.locator('button#approve').count()) === 1);
  const status = await approverVote(id, 'deny', ans.intent_hash);
  check('denied over the API meanwhile', status === 200, status);
  await Promise.all([page.waitForLoadState('load'), page.click('button#approve')]);
  await page.locator('#error').waitFor({ state: 'visible', timeout: 10_000 });
  const err = (await text(page, '#error')) ?? '';
  check('#error names the refusal', /ALREADY_VOTED|APPROVAL_RESOLVED/.test(err), err);
  check('no #flash on a refusal', (await page.locator('#flash').count()) === 0);
  await shot(page, '06-refused');
}

// Case 4: the auditor's read-only view (the dev approver is in
// "auditors"): the approved refund's events are in the log, its timeline
// shows the vote and the grant, and the export links are there.
async function caseAudit(page, intentId) {
  await page.goto(`${BASE}/ui/approvals`);
  const nav = page.locator('a#nav-audit');
  check('auditors get an "Audit log" link', (await nav.count()) === 1);
  const res = await page.goto(`${BASE}/ui/audit`);
  check('audit page loads', res && res.status() === 200, res && res.status());
  check('events are listed', (await page.locator('#events li.event').count()) > 0);
  check('export link', (await page.locator('a#export').count()) === 1);
  check('checkpoint section',
    (await page.locator('#checkpoint').count()) + (await page.locator('#no-checkpoint').count()) === 1);
  await shot(page, '07-audit');
  await page.goto(`${BASE}/ui/audit/intents/${intentId}`);
  const tl = (await text(page, '#timeline')) ?? '';
  for (const t of ['intent.received', 'intent.decided', 'approval.voted', 'approval.resolved']) {
    check(`timeline shows ${t}`, tl.includes(t), tl.slice(0, 200));
  }
  check('no script element on the audit pages', (await page.locator('script').count()) === 0);
  await shot(page, '08-audit-timeline');
}

async function main() {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  const dialogs = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    page.on('dialog', async (d) => {
      dialogs.push(`${d.type()}: ${d.message()}`);
      await d.dismiss().catch(() => {});
    });
    page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
    for (const [name, run] of [
      ['approve', () => caseApprove(page)],
      ['script in params', () => caseScript(page, dialogs)],
      ['stale page', () => caseStale(page)],
      ['audit view', () => caseAudit(page, approvedIntent)],
    ]) {
      try {
        await run();
      } catch (e) {
        check(`case "${name}" ran to the end`, false, e.stack || e);
        await shot(page, `failed-${name.replace(/\W+/g, '-')}`).catch(() => {});
      }
    }
    check('no dialog opened at all', dialogs.length === 0, JSON.stringify(dialogs));
  } finally {
    await browser.close();
  }
}

await main();
console.log(`browser: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
