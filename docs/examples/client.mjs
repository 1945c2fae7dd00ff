#!/usr/bin/env node
// client.mjs - ask intentgate for leave to act, Node.js 18+ built-ins only
// (fetch, AbortSignal.timeout); no packages.
//
//   INTENTGATE_URL=http://127.0.0.1:8700 INTENTGATE_TOKEN=igt_... \
//       node client.mjs [ACTION [RESOURCE [PARAMS_JSON]]]
//
// Submits the intent (POST /v1/intents) and handles the three decisions:
// ALLOW (prints the answer with its grant, exit 0), ESCALATE (long-polls
// GET /v1/intents/{id}?wait=60 until a human decides or INTENTGATE_WAIT
// seconds, default 300, pass) and BLOCK (prints the reasons, exit 4). With
// INTENTGATE_EXECUTOR_URL set, an allowed intent is then sent with its
// grant to the executor (POST /v1/execute).
//
// Exit status, as `intentgate submit`: 0 allowed (and, with an executor,
// COMPLETED), 2 error, 3 still waiting for a human, 4 blocked or expired,
// 5 allowed but the executor did not complete it.

import { pathToFileURL } from 'node:url';

const ALLOW = 0, ERROR = 2, PENDING = 3, BLOCKED = 4, NOT_RUN = 5;

class GateError extends Error {}

// One JSON exchange; resolves to {status, body}.
async function call(method, url, body, token) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let resp;
  try {
    resp = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'error',
      signal: AbortSignal.timeout(75_000),
    });
  } catch (e) {
    throw new GateError(`cannot reach ${url}: ${e.cause?.message ?? e.message}`);
  }
  const text = await resp.text();
  try {
    return { status: resp.status, body: text ? JSON.parse(text) : null };
  } catch {
    throw new GateError(`HTTP ${resp.status} from ${url} is not JSON`);
  }
}

// Submit an intent and wait up to `wait` seconds for a human if it
// escalates. Resolves to {code: ALLOW | PENDING | BLOCKED, answer}.
export async function decide(action, resource, params, { context, wait = 300 } = {}) {
  const url = process.env.INTENTGATE_URL;
  const token = process.env.INTENTGATE_TOKEN;
  const body = { action, resource, params };
  if (context !== undefined) body.context = context;
  let { status, body: answer } = await call('POST', `${url}/v1/intents`, body, token);
  if ((status !== 200 && status !== 201) || answer === null || typeof answer !== 'object') {
    throw new GateError(`the PDP refused (HTTP ${status}): ${JSON.stringify(answer)}`);
  }
  let decision = answer.decision;
  if (decision === 'ESCALATE') {
    console.error(`client.mjs: ESCALATE: waiting up to ${wait}s for a human`);
    const deadline = Date.now() + wait * 1000;
    let state = 'PENDING_APPROVAL';
    while (state === 'PENDING_APPROVAL') {
      const left = Math.ceil((deadline - Date.now()) / 1000);
      if (left <= 0) break;
      ({ status, body: answer } = await call(
        'GET', `${url}/v1/intents/${answer.intent_id}?wait=${Math.min(left, 60)}`,
        undefined, token));
      if (status !== 200) throw new GateError(`waiting: HTTP ${status}`);
      state = answer.state;
    }
    decision = { ALLOWED: 'ALLOW', PENDING_APPROVAL: 'ESCALATE',
                 BLOCKED: 'BLOCK', EXPIRED: 'BLOCK' }[state];
  }
  if (decision === 'ALLOW' && String(answer.grant ?? '').startsWith('v4.public.')) {
    return { code: ALLOW, answer };
  }
  if (decision === 'ESCALATE') return { code: PENDING, answer };
  if (decision === 'BLOCK') return { code: BLOCKED, answer };
  throw new GateError(`unexpected answer: ${JSON.stringify(answer)}`);
}

// Hand the binding, exactly as returned, and the grant to the executor.
export async function execute(answer) {
  const { status, body } = await call(
    'POST', `${process.env.INTENTGATE_EXECUTOR_URL}/v1/execute`,
    { intent: answer.intent, grant: answer.grant });
  const ok = status === 200 && body?.outcome === 'COMPLETED';
  return { code: ok ? ALLOW : NOT_RUN, answer: body };
}

async function main(argv) {
  const [action = 'payments.refund', resource = 'orders/1', paramsText] = argv;
  let params = { amount: 42, currency: 'EUR', order_id: 'o-1' };
  const wait = Number(process.env.INTENTGATE_WAIT ?? 300);
  try {
    if (paramsText !== undefined) params = JSON.parse(paramsText);
  } catch (e) {
    console.error(`client.mjs: PARAMS_JSON: ${e.message}`);
    return ERROR;
  }
  for (const name of ['INTENTGATE_URL', 'INTENTGATE_TOKEN']) {
    if (!process.env[name]) {
      console.error(`client.mjs: ${name} is not set`);
      return ERROR;
    }
  }
  if (!Number.isInteger(wait) || wait < 0) {
    console.error('client.mjs: INTENTGATE_WAIT must be whole seconds');
    return ERROR;
  }
  let result;
  try {
    result = await decide(action, resource, params, { wait });
  } catch (e) {
    console.error(`client.mjs: ${e.message}`);
    return ERROR;
  }
  if (result.code === ALLOW && process.env.INTENTGATE_EXECUTOR_URL) {
    const id = result.answer.intent_id;
    try {
      result = await execute(result.answer);
    } catch (e) {
      console.error(`client.mjs: ${e.message}; check GET /v1/intents/${id}`);
      return NOT_RUN;
    }
  }
  console.log(JSON.stringify(result.answer, null, 2));
  console.error(`client.mjs: ${{ [ALLOW]: 'ALLOW', [PENDING]: 'still waiting',
                                 [BLOCKED]: 'BLOCK', [NOT_RUN]: 'not completed' }[result.code]}`);
  return result.code;
}

// Run as a script (not when imported for decide/execute).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
