// tests/mcp/client.mjs - a scripted MCP client built on the official SDK
// (@modelcontextprotocol/sdk's Client, pinned by package-lock.json), so a
// Python test can drive a server, or the gateway, the way real clients do.
//
//   node client.mjs --url URL [--token TOKEN] [options] SCRIPT.json
//   node client.mjs --stdio "CMD ARGS" [options] SCRIPT.json
//
// --url uses StreamableHTTPClientTransport; TOKEN goes in an
// `Authorization: Bearer` header on every request (requestInit headers).
// --stdio starts CMD (split on spaces, no shell) with
// StdioClientTransport, given this process's whole environment. Options:
//   --capabilities JSON   the client capabilities declared (default {});
//                         with sampling/elicitation the client answers
//                         those requests (see the set_* steps)
//   --timeout-ms N        each request's timeout (default 30000)
//
// SCRIPT.json is a list of steps, run in order:
//   {"op":"list_tools"}                {"op":"list_resources"}
//   {"op":"list_prompts"}              {"op":"ping"}
//   {"op":"call","name":N,"arguments":{..},"progress":true?}
//   {"op":"read_resource","uri":U}
//   {"op":"get_prompt","name":N,"arguments":{..}}
//   {"op":"set_level","level":"debug"}
//   {"op":"raw_session_id"}            the transport's Mcp-Session-Id
//   {"op":"set_elicitation_answer","answer":{action,content?}}
//   {"op":"set_sampling_answer","answer":{role,content,model,..}}
//   {"op":"terminate"}                 DELETE the session (http)
// and prints one JSON line per step on stdout:
//   {"step":I,"op":OP,"ok":true,"result":R,"notifications":[..],
//    "requests":[..]}
//   {"step":I,"op":OP,"ok":false,"error":{"message":M,"code":C},...}
// "notifications" are those that arrived during the step (progress, log
// messages, list_changed...), "requests" the server's requests the
// client answered during it. A connection failure prints
// {"step":"connect","ok":false,"error":..} and exits 1; otherwise the exit
// status is 0 whatever the steps gave (the test asserts on the lines).
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from
    "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
    CreateMessageRequestSchema,
    ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

function usage(msg) {
    if (msg) process.stderr.write(`client.mjs: ${msg}\n`);
    process.stderr.write(
        "usage: node client.mjs (--url URL [--token T] | --stdio CMD) " +
        "[--capabilities JSON] [--timeout-ms N] SCRIPT.json\n");
    process.exit(2);
}

function parseArgs(argv) {
    const o = { capabilities: {}, timeoutMs: 30000 };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const val = () => {
            if (i + 1 >= argv.length) usage(`${a} needs a value`);
            return argv[++i];
        };
        if (a === "--url") o.url = val();
        else if (a === "--token") o.token = val();
        else if (a === "--stdio") o.stdio = val();
        else if (a === "--capabilities") o.capabilities = JSON.parse(val());
        else if (a === "--timeout-ms") o.timeoutMs = Number(val());
        else if (a.startsWith("--")) usage(`unknown option ${a}`);
        else if (o.script === undefined) o.script = a;
        else usage(`unexpected argument ${a}`);
    }
    if (!o.script || (!o.url === !o.stdio)) usage();
    return o;
}

function makeTransport(o) {
    if (o.url) {
        const headers = {};
        if (o.token !== undefined) headers.Authorization = `Bearer ${o.token}`;
        return new StreamableHTTPClientTransport(new URL(o.url),
            { requestInit: { headers } });
    }
    const [command, ...args] = o.stdio.split(" ").filter((s) => s !== "");
    // The whole environment (the SDK passes only a safe subset by default).
    return new StdioClientTransport({ command, args, stderr: "inherit",
        env: { ...process.env } });
}

function errorOf(e) {
    const out = { message: e instanceof Error ? e.message : String(e) };
    if (e && e.code !== undefined) out.code = e.code;
    if (e && e.data !== undefined) out.data = e.data;
    return out;
}

const o = parseArgs(process.argv.slice(2));
const steps = JSON.parse(readFileSync(o.script, "utf8"));
if (!Array.isArray(steps)) usage("the script must be a JSON list of steps");

const client = new Client({ name: "intentgate-test-client", version: "1.0.0" },
    { capabilities: o.capabilities });
let notifications = [];
let requests = [];
const answers = {
    elicitation: { action: "decline" },
    sampling: {
        role: "assistant", model: "test-model", stopReason: "endTurn",
        content: { type: "text", text: "sampled by client.mjs" },
    },
};
client.fallbackNotificationHandler = async (n) => { notifications.push(n); };
if (o.capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (r) => {
        requests.push({ method: r.method, params: r.params });
        return answers.elicitation;
    });
}
if (o.capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async (r) => {
        requests.push({ method: r.method, params: r.params });
        return answers.sampling;
    });
}

const transport = makeTransport(o);
try {
    await client.connect(transport, { timeout: o.timeoutMs });
} catch (e) {
    console.log(JSON.stringify({ step: "connect", ok: false, error: errorOf(e) }));
    process.exit(1);
}

async function runStep(s) {
    const opts = { timeout: o.timeoutMs };
    switch (s.op) {
    case "list_tools": return client.listTools({}, opts);
    case "list_resources": return client.listResources({}, opts);
    case "list_prompts": return client.listPrompts({}, opts);
    case "ping": return client.ping(opts);
    case "call":
        return client.callTool({ name: s.name, arguments: s.arguments ?? {} },
            undefined,
            s.progress ? {
                ...opts,
                onprogress: (p) => notifications.push(
                    { method: "notifications/progress", params: p }),
            } : opts);
    case "read_resource": return client.readResource({ uri: s.uri }, opts);
    case "get_prompt":
        return client.getPrompt({ name: s.name, arguments: s.arguments ?? {} },
            opts);
    case "set_level": return client.setLoggingLevel(s.level, opts);
    case "raw_session_id": return { sessionId: transport.sessionId ?? null };
    case "set_elicitation_answer":
        answers.elicitation = s.answer;
        return {};
    case "set_sampling_answer":
        answers.sampling = s.answer;
        return {};
    case "terminate":
        if (!transport.terminateSession) throw new Error("not over http");
        await transport.terminateSession();
        return {};
    default: throw new Error(`unknown op ${JSON.stringify(s.op)}`);
    }
}

for (let i = 0; i < steps.length; i++) {
    const s = steps[i];
    notifications = [];
    requests = [];
    const line = { step: i, op: s.op };
    try {
        line.result = await runStep(s);
        line.ok = true;
    } catch (e) {
        line.ok = false;
        line.error = errorOf(e);
    }
    // Notifications that raced the answer are delivered first by the SDK
    // on one stream; give the event loop one turn for those on another.
    await new Promise((r) => setImmediate(r));
    line.notifications = notifications;
    line.requests = requests;
    console.log(JSON.stringify(line));
}
await client.close();
process.exit(0);
