// state.js — what the page knows about the session, in one place.
//
// Guarantees: this is the only mutable session model shared between
// modules (the session_started info, servers, running flag); it holds data
// only and never touches the DOM. `reset()` returns it to "nothing known",
// as the server's `reset` event requires.

export const state = {
  /** The last session_started payload (SessionInfo), or null. */
  session: null,
  /** The saved session's id (session_started / session_saved), or null. */
  sessionId: null,
  workspace: '',
  provider: '',
  model: '',
  contextWindow: 0,
  contextTokens: 0,
  mode: 'react',
  approval: 'ask',
  /** name → {name, state, message?} */
  servers: new Map(),
  /** A turn runs (between turn_started and turn_completed). */
  running: false,
  /** Tokens of every model call since the page's last reset. */
  usage: { input: 0, output: 0 },
  /** The session's cost so far (US dollars), or null when unknown. */
  cost: { usd: null },
};

export function reset() {
  state.session = null;
  state.sessionId = null;
  state.workspace = '';
  state.provider = '';
  state.model = '';
  state.contextWindow = 0;
  state.contextTokens = 0;
  state.mode = 'react';
  state.approval = 'ask';
  state.servers = new Map();
  state.running = false;
  state.usage = { input: 0, output: 0 };
  state.cost = { usd: null };
}

/**
 * The MCP server a tool belongs to: the preview's server when there is one,
 * else the longest configured server name `s` such that the tool is named
 * `mcp_<s>_...`. Null for a built-in tool.
 */
export function serverOfTool(toolName, preview) {
  if (preview && preview.kind === 'mcp' && typeof preview.server === 'string') return preview.server;
  const name = String(toolName || '');
  if (!name.startsWith('mcp_')) return null;
  let best = null;
  for (const server of state.servers.keys()) {
    if (name.startsWith(`mcp_${server}_`) && (!best || server.length > best.length)) best = server;
  }
  return best;
}

/** Skills a `/NAME` command may name (those that loaded). */
export function usableSkills() {
  const skills = state.session && Array.isArray(state.session.skills) ? state.session.skills : [];
  return skills.filter((s) => s && typeof s.name === 'string' && s.state !== 'failed');
}
