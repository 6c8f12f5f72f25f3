// The official TypeScript SDK's client doing what mcp-bench does: N
// sequential `echo` calls to one stdio server. Prints `calls_per_second P99_MS`.
// Usage: node mcp_echo_client.mjs PEERS_DIR N COMMAND ARGS...
import { createRequire } from 'node:module';
import path from 'node:path';

const [peers, n, command, ...args] = process.argv.slice(2);
const require = createRequire(path.join(peers, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const client = new Client({ name: 'bench', version: '1' });
await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
const latencies = [];
const started = performance.now();
for (let i = 0; i < Number(n); i++) {
  const one = performance.now();
  await client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
  latencies.push(performance.now() - one);
}
const total = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))];
console.log(`${(Number(n) / total).toFixed(0)} ${p99.toFixed(3)}`);
await client.close();
