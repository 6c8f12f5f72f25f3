// mcp.ts — the MCP servers' states as axon reports them to the panel: the
// ACP extension notification `_axon/mcp_servers` (ACP reserves methods
// starting with `_` for extensions), which `axon acp` sends to a client
// that asks with `_meta: {axon: {mcpServers: true}}` in its
// clientCapabilities (chatSession.ts does). Parsed strictly (zod) so a
// malformed one is dropped, never shown.
//
// Shape (JSON-RPC notification, agent → client):
//   { "method": "_axon/mcp_servers",
//     "params": { "sessionId": "…",
//                 "servers": [ { "name": "github", "state": "ready",
//                                "message": null, "tools": 12 } ] } }
// `servers` is the session's whole list each time (not a change), sent once
// the session is open and again whenever a server's state changes; `state`
// is axon's McpState (connecting, ready, error, closed, needs_login; an
// unknown one is shown as it is); `message` says why (an error, the login
// command); `tools` (how many tools the server offers) is optional and
// shown when present (axon does not send it today).

import { z } from "zod/v4";
import type { AgentEvent } from "./messages";

export const MCP_SERVERS_METHOD = "_axon/mcp_servers";

export const McpServersParams = z.object({
  sessionId: z.string(),
  servers: z.array(
    z.object({
      name: z.string(),
      state: z.string(),
      message: z.string().nullish(),
      tools: z.number().int().nonnegative().nullish(),
    }),
  ),
});

export type McpServersNotification = z.infer<typeof McpServersParams>;

/** The panel's event for one notification. */
export function mcpEvent(params: McpServersNotification): AgentEvent {
  return {
    type: "mcp_servers",
    servers: params.servers.map((s) => ({
      name: s.name,
      state: s.state,
      ...(s.message ? { message: s.message } : {}),
      ...(typeof s.tools === "number" ? { tools: s.tools } : {}),
    })),
  };
}
