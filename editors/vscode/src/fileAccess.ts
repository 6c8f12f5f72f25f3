// fileAccess.ts — the ACP `fs/*` capability, independent of who holds the
// files. Pure: the editor (vscodeFiles.ts) or a test supplies FileAccess.
//
// Guarantees: `fs/read_text_file`'s `line` (1-based) and `limit` are
// applied here, the same for every FileAccess; a file that cannot be read
// is answered with ACP's resource-not-found error naming the path, so axon
// falls back or reports it instead of seeing a crash.

import * as acp from "@agentclientprotocol/sdk";

/** Where the agent's file reads and writes go. */
export interface FileAccess {
  /** The file's current text (an editor's unsaved buffer included). */
  read(path: string): Promise<string>;
  /** Replaces the file's text (creating it when missing). */
  write(path: string, content: string): Promise<void>;
}

/** `text` from 1-based `line`, at most `limit` lines; whole when neither is given. */
export function sliceLines(text: string, line?: number | null, limit?: number | null): string {
  if (!line && !limit) return text;
  const all = text.split("\n");
  const start = Math.max(0, (line ?? 1) - 1);
  const end = limit ? start + limit : all.length;
  return all.slice(start, end).join("\n");
}

export async function readTextFile(files: FileAccess, request: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse> {
  let text: string;
  try {
    text = await files.read(request.path);
  } catch {
    throw acp.RequestError.resourceNotFound(request.path);
  }
  return { content: sliceLines(text, request.line, request.limit) };
}

export async function writeTextFile(files: FileAccess, request: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse> {
  try {
    await files.write(request.path, request.content);
  } catch (error) {
    throw acp.RequestError.internalError(undefined, `cannot write ${request.path}: ${(error as Error).message}`);
  }
  return {};
}
