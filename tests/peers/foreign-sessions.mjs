// Makes one real Claude Code transcript and one real Codex rollout, offline.
//
// Runs the pinned CLIs (tests/peers/package.json: @anthropic-ai/claude-code,
// @openai/codex) non-interactively against a scripted model served here on
// 127.0.0.1 (a free port): Claude Code speaks the Anthropic Messages API
// (SSE), Codex the OpenAI Responses API (SSE) through a custom model
// provider. In each conversation the model thinks, calls ONE shell tool
// (`echo hi`), reads its result and answers with text.
//
// Guarantees: every child gets a fresh HOME (and CODEX_HOME) under the output
// directory and a minimal environment (no inherited keys); its HTTP(S)
// proxy is this server, which refuses every tunnel or forward, so nothing
// leaves the machine and every attempt is reported under "blocked". Each CLI
// has a deadline; on any failure the message names the step, and the child's
// exit code, stderr and the requests the server saw. Every child runs in its
// own process group, which is killed before exit.
//
// Usage: node tests/peers/foreign-sessions.mjs [--out DIR]
// Prints {"claude": PATH, "codex": PATH, "workspace": DIR, "out": DIR,
// "versions": {...}, "requests": [...], "blocked": [...]}. The files stay
// under DIR (a new temp dir without --out); the caller removes them.

import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = (name) => path.join(here, 'node_modules', '.bin', name);
const DEADLINE_MS = 120_000;
const PROMPT = 'Run `echo hi` in the shell, then tell me what it printed.';
const ANSWER = 'The command printed: hi';
const THOUGHT = 'The user wants me to run echo hi; I will use the shell tool.';

function fail(step, detail) {
  const err = new Error(`foreign-sessions: ${step}: ${detail}`);
  err.step = step;
  throw err;
}

// ---------- the scripted model -------------------------------------------

const requests = []; // {peer, method, url, kind}
const blocked = []; // outbound attempts refused (proxy CONNECT or forward)
let serverPort = 0;
let currentStep = 'start'; // which CLI runs, to name who tried the network

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch (e) {
    return fail('scripted model', `${what} is not JSON (${e.message}): ${text.slice(0, 200)}`);
  }
}

function sse(res, events) {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  for (const [event, data] of events) {
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }
  res.end();
}

// --- Anthropic Messages ---

let claudeCounter = 0;

// True when the conversation already holds a tool result: time to answer.
function anthropicHasToolResult(body) {
  return (body.messages || []).some(
    (m) => Array.isArray(m.content) && m.content.some((b) => b && b.type === 'tool_result'),
  );
}

function anthropicBlocks(body) {
  const tools = (body.tools || []).map((t) => t.name);
  if (tools.includes('Bash') && !anthropicHasToolResult(body)) {
    return {
      stop: 'tool_use',
      blocks: [
        { type: 'thinking', thinking: THOUGHT, signature: 'loopback-signature' },
        { type: 'text', text: 'I will run it.' },
        {
          type: 'tool_use',
          id: `toolu_loopback_${++claudeCounter}`,
          name: 'Bash',
          input: { command: 'echo hi', description: 'Print hi' },
        },
      ],
    };
  }
  // The final answer, and any side request (titles, summaries) Claude Code makes.
  return { stop: 'end_turn', blocks: [{ type: 'text', text: ANSWER }] };
}

function anthropicStream(res, body) {
  const { stop, blocks } = anthropicBlocks(body);
  const id = `msg_loopback_${++claudeCounter}`;
  const usage = { input_tokens: 20, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const events = [
    ['message_start', {
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage },
    }],
  ];
  blocks.forEach((b, index) => {
    if (b.type === 'thinking') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: b.thinking } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: b.signature } }]);
    } else if (b.type === 'text') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } }]);
    } else {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } }]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 12 } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  sse(res, events);
}

function anthropicJson(res, body) {
  const { stop, blocks } = anthropicBlocks(body);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({
    id: `msg_loopback_${++claudeCounter}`, type: 'message', role: 'assistant', model: body.model,
    content: blocks, stop_reason: stop, stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 12 },
  }));
}

// --- OpenAI Responses (Codex) ---

let codexCounter = 0;

// The shell tool Codex offered and the arguments its schema wants: codex picks
// exec_command, shell_command or shell by model family, so read the request.
function codexShellCall(body) {
  const tools = body.tools || [];
  const byName = (n) => tools.find((t) => (t.name || (t.function && t.function.name)) === n);
  if (byName('exec_command')) return { name: 'exec_command', args: { cmd: 'echo hi' } };
  if (byName('shell_command')) return { name: 'shell_command', args: { command: 'echo hi' } };
  if (byName('shell')) return { name: 'shell', args: { command: ['bash', '-lc', 'echo hi'] } };
  const names = tools.map((t) => t.name || t.type).join(', ');
  return fail('scripted model (codex)', `no shell tool among the tools Codex offered: ${names}`);
}

function codexStream(res, body) {
  const input = body.input || [];
  const answered = input.some((i) => i && (i.type === 'function_call_output' || i.type === 'custom_tool_call_output'));
  const respId = `resp_loopback_${++codexCounter}`;
  const items = [];
  if (!answered && (body.tools || []).length > 0) {
    const call = codexShellCall(body);
    items.push({
      type: 'reasoning', id: `rs_loopback_${codexCounter}`,
      summary: [{ type: 'summary_text', text: THOUGHT }],
    });
    items.push({
      type: 'function_call', id: `fc_loopback_${codexCounter}`, call_id: `call_loopback_${codexCounter}`,
      name: call.name, arguments: JSON.stringify(call.args),
    });
  } else {
    items.push({
      type: 'message', id: `msg_loopback_${codexCounter}`, role: 'assistant', status: 'completed',
      content: [{ type: 'output_text', text: ANSWER, annotations: [] }],
    });
  }
  const events = [['response.created', { type: 'response.created', response: { id: respId } }]];
  items.forEach((item, output_index) => {
    events.push(['response.output_item.added', { type: 'response.output_item.added', output_index, item }]);
    if (item.type === 'message') {
      events.push(['response.output_text.delta', {
        type: 'response.output_text.delta', item_id: item.id, output_index, content_index: 0, delta: ANSWER,
      }]);
    }
    events.push(['response.output_item.done', { type: 'response.output_item.done', output_index, item }]);
  });
  events.push(['response.completed', {
    type: 'response.completed',
    response: {
      id: respId,
      usage: {
        input_tokens: 20, input_tokens_details: { cached_tokens: 0 },
        output_tokens: 12, output_tokens_details: { reasoning_tokens: 4 }, total_tokens: 32,
      },
    },
  }]);
  sse(res, events);
}

// --- routing ---

async function handle(req, res) {
  const url = req.url || '';
  // A proxied plain-http request carries an absolute URL; one for this server is served.
  let pathname = url;
  if (/^https?:\/\//i.test(url)) {
    const u = new URL(url);
    if (u.host !== `127.0.0.1:${serverPort}`) {
      blocked.push(`${currentStep}: ${req.method} ${url}`);
      res.writeHead(403).end('foreign-sessions: outbound traffic is refused');
      return;
    }
    pathname = u.pathname + u.search;
  }
  const bodyText = await readBody(req);
  const p = pathname.split('?')[0];
  const peer = p.startsWith('/codex/') ? 'codex' : 'claude';
  requests.push({ peer, method: req.method, url: pathname });
  if (req.method === 'POST' && p === '/v1/messages') {
    const body = parseJson(bodyText, 'the Messages request');
    return body.stream ? anthropicStream(res, body) : anthropicJson(res, body);
  }
  if (req.method === 'POST' && p === '/v1/messages/count_tokens') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ input_tokens: 20 }));
  }
  if (req.method === 'POST' && p === '/codex/v1/responses') {
    return codexStream(res, parseJson(bodyText, 'the Responses request'));
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { type: 'not_found', message: `scripted model serves no ${req.method} ${p}` } }));
}

function startServer() {
  const server = http.createServer((req, res) => {
    handle(req, res).catch((e) => {
      requests.push({ error: e.message });
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'api_error', message: e.message } }));
    });
  });
  // HTTPS through the proxy arrives as CONNECT: refuse the tunnel, remember the host.
  server.on('connect', (req, socket) => {
    blocked.push(`${currentStep}: CONNECT ${req.url}`);
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      serverPort = server.address().port;
      resolve(server);
    });
  });
}

// ---------- running the CLIs ----------------------------------------------

const children = new Set();

function killAll() {
  for (const child of children) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  children.clear();
}

function run(step, cmd, args, { cwd, env }) {
  if (!fs.existsSync(cmd)) {
    fail(step, `${cmd} is missing; run scripts/peers (npm ci in tests/peers)`);
  }
  currentStep = step;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      reject(new Error(`foreign-sessions: ${step}: no exit within ${DEADLINE_MS / 1000}s\nstderr: ${stderr.slice(-2000)}\nrequests: ${JSON.stringify(requests)}`));
    }, DEADLINE_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`foreign-sessions: ${step}: cannot start ${cmd}: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // The CLI may leave helpers behind in its group; they go with it.
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      children.delete(child);
      if (code !== 0) {
        reject(new Error(`foreign-sessions: ${step}: exit ${code ?? signal}\nstdout: ${stdout.slice(-2000)}\nstderr: ${stderr.slice(-2000)}\nrequests: ${JSON.stringify(requests)}`));
      } else {
        resolve({ stdout, stderr });
      }
    });
  });
}

// codex's launcher is a node script: it runs on the node running this one.
const childPath = [path.dirname(process.execPath), process.env.PATH || '/usr/bin:/bin'].join(path.delimiter);

function baseEnv(home) {
  const proxy = `http://127.0.0.1:${serverPort}`;
  return {
    PATH: childPath,
    HOME: home,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    TMPDIR: path.join(home, 'tmp'),
    // Anything that is not the scripted model meets the refusing proxy.
    HTTP_PROXY: proxy, HTTPS_PROXY: proxy, ALL_PROXY: proxy,
    http_proxy: proxy, https_proxy: proxy, all_proxy: proxy,
    NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost',
  };
}

function findFiles(dir, test) {
  const out = [];
  if (!fs.existsSync(dir)) return out;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && test(entry.name)) out.push(path.join(entry.parentPath ?? entry.path, entry.name));
  }
  return out;
}

async function runClaude(out, workspace) {
  const home = path.join(out, 'claude-home');
  fs.mkdirSync(path.join(home, 'tmp'), { recursive: true });
  const env = {
    ...baseEnv(home),
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${serverPort}`,
    ANTHROPIC_API_KEY: 'sk-ant-loopback-dummy',
    // Documented switches for everything besides the model: telemetry, error
    // reports, the auto-updater, release notes, model capability look-ups.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_BUG_COMMAND: '1',
  };
  const { stdout } = await run('claude -p', bin('claude'), [
    '-p', PROMPT,
    '--output-format', 'json',
    '--model', 'claude-sonnet-4-5',
    '--allowedTools', 'Bash',
  ], { cwd: workspace, env });
  const result = parseJson(stdout.trim(), 'claude -p output');
  if (result.is_error || !result.session_id) fail('claude -p', `no successful result: ${stdout.slice(0, 1000)}`);
  const found = findFiles(path.join(home, '.claude', 'projects'), (n) => n === `${result.session_id}.jsonl`);
  if (found.length !== 1) fail('claude transcript', `expected ${result.session_id}.jsonl under ${home}/.claude/projects, found ${found.length}`);
  return { transcript: found[0], result };
}

async function runCodex(out, workspace) {
  const home = path.join(out, 'codex-home');
  const codexHome = path.join(home, '.codex');
  fs.mkdirSync(path.join(home, 'tmp'), { recursive: true });
  fs.mkdirSync(codexHome, { recursive: true });
  fs.writeFileSync(path.join(codexHome, 'config.toml'), [
    'model = "loopback-model"',
    'model_provider = "loopback"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.loopback]',
    'name = "Scripted loopback model"',
    `base_url = "http://127.0.0.1:${serverPort}/codex/v1"`,
    'env_key = "LOOPBACK_API_KEY"',
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[analytics]',
    'enabled = false',
    '',
    // Plugins and apps sync a catalog from github.com and chatgpt.com at startup.
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'apps = false',
    '',
  ].join('\n'));
  const env = { ...baseEnv(home), CODEX_HOME: codexHome, LOOPBACK_API_KEY: 'loopback-dummy-key' };
  const { stdout } = await run('codex exec', bin('codex'), [
    'exec',
    '--skip-git-repo-check',
    '--dangerously-bypass-approvals-and-sandbox',
    '--json',
    '-C', workspace,
    PROMPT,
  ], { cwd: workspace, env });
  const found = findFiles(path.join(codexHome, 'sessions'), (n) => n.startsWith('rollout-') && n.endsWith('.jsonl'));
  if (found.length !== 1) fail('codex rollout', `expected one rollout-*.jsonl under ${codexHome}/sessions, found ${found.length}; codex printed: ${stdout.slice(0, 1000)}`);
  return { rollout: found[0], events: stdout };
}

// The file must hold the conversation asked for: the call, its result, the answer.
function check(step, file, needles) {
  const text = fs.readFileSync(file, 'utf8');
  const records = text.split('\n').filter((l) => l.trim() !== '');
  records.forEach((line, i) => parseJson(line, `${file} line ${i + 1}`));
  const missing = needles.filter((n) => !text.includes(n));
  if (missing.length > 0) fail(step, `${file} lacks ${missing.map((m) => JSON.stringify(m)).join(', ')}`);
}

async function version(cmd) {
  const { stdout } = await run(`${path.basename(cmd)} --version`, cmd, ['--version'], {
    cwd: here, env: { PATH: childPath, HOME: os.tmpdir() },
  });
  return stdout.trim();
}

async function main() {
  const argv = process.argv.slice(2);
  const outIdx = argv.indexOf('--out');
  const out = outIdx >= 0 ? path.resolve(argv[outIdx + 1] || fail('arguments', '--out needs a directory')) : fs.mkdtempSync(path.join(os.tmpdir(), 'axon-foreign-'));
  const workspace = path.join(out, 'workspace');
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(path.join(workspace, 'README.md'), 'A scratch workspace for foreign-sessions.mjs.\n');
  const server = await startServer();
  try {
    const versions = { claude: await version(bin('claude')), codex: await version(bin('codex')), node: process.version };
    const claude = await runClaude(out, workspace);
    const codex = await runCodex(out, workspace);
    check('claude transcript', claude.transcript, ['"type":"tool_use"', '"name":"Bash"', '"type":"tool_result"', '"thinking"', ANSWER]);
    check('codex rollout', codex.rollout, ['"type":"session_meta"', '"type":"function_call"', '"type":"function_call_output"', '"type":"reasoning"', ANSWER]);
    if (blocked.length > 0) {
      fail('offline check', `the CLIs tried to reach the network: ${blocked.join('; ')}`);
    }
    process.stdout.write(`${JSON.stringify({
      claude: claude.transcript, codex: codex.rollout, workspace, out, versions, requests, blocked,
    }, null, 2)}\n`);
  } finally {
    killAll();
    server.closeAllConnections();
    server.close();
  }
}

process.on('SIGINT', () => { killAll(); process.exit(130); });
process.on('SIGTERM', () => { killAll(); process.exit(143); });

main().catch((e) => {
  killAll();
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
});
