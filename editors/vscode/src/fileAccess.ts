// fileAccess.ts — the ACP `fs/*` capability, independent of who holds the
// files. Pure (Node's fs for resolving paths, no vscode): the editor
// (vscodeFiles.ts) or a test supplies FileAccess.
//
// Guarantees: a request reaches FileAccess only if it names the live
// session and an absolute path that, with `..` and symlinks resolved
// (realpath; for a file not there yet, the realpath of its nearest existing
// parent), lies inside one of `FileAccess.roots()`; FileAccess is given
// that resolved path. Anything else is ACP's invalid-params error saying
// which path (or session) and why, and touches nothing. `fs/read_text_file`'s
// `line` (1-based) and `limit` are applied here, the same for every
// FileAccess; a file that cannot be read is answered with ACP's
// resource-not-found error naming the path, so axon falls back or reports
// it instead of seeing a crash.

import * as fs from "node:fs";
import * as path from "node:path";
import * as acp from "@agentclientprotocol/sdk";

/** Where the agent's file reads and writes go. */
export interface FileAccess {
  /** The folders the agent may read and write under (absolute; the workspace folders). */
  roots(): readonly string[];
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

function refuse(file: string, why: string): acp.RequestError {
  return acp.RequestError.invalidParams({ path: file }, `${file}: ${why}`);
}

/** The realpath of `file`, or of its nearest existing parent joined with the rest (a file not there yet). */
async function resolveReal(file: string): Promise<string> {
  const rest: string[] = [];
  let at = path.resolve(file);
  for (;;) {
    try {
      return path.join(await fs.promises.realpath(at), ...rest.reverse());
    } catch (error) {
      const parent = path.dirname(at);
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || parent === at) throw error;
      rest.push(path.basename(at));
      at = parent;
    }
  }
}

function inside(file: string, root: string): boolean {
  const relative = path.relative(root, file);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/**
 * `file` with `..` and symlinks resolved, if it is absolute and lies inside
 * one of `files.roots()`; throws invalid-params naming the path and why
 * otherwise. The one check for every path that comes from outside (the
 * agent's fs requests, the panel's links and mentions).
 */
export async function insideRoots(files: Pick<FileAccess, "roots">, file: string): Promise<string> {
  if (typeof file !== "string" || !path.isAbsolute(file)) throw refuse(file, "not an absolute path");
  let real: string;
  try {
    real = await resolveReal(file);
  } catch (error) {
    throw refuse(file, `cannot be resolved (${(error as Error).message})`);
  }
  const roots = files.roots();
  for (const root of roots) {
    const realRoot = await fs.promises.realpath(root).catch(() => path.resolve(root));
    if (inside(real, realRoot)) return real;
  }
  const where = roots.length ? roots.join(", ") : "none open";
  throw refuse(file, `outside the workspace folders (${where})${real !== path.normalize(file) ? `; it resolves to ${real}` : ""}`);
}

/**
 * The path the agent asked for, resolved, if the request may touch it:
 * the live session's, absolute, inside a root. Throws invalid-params otherwise.
 */
export async function checkedPath(files: FileAccess, request: { sessionId: string; path: string }, liveSession: string | null): Promise<string> {
  if (liveSession === null || request.sessionId !== liveSession) {
    throw acp.RequestError.invalidParams(
      { sessionId: request.sessionId },
      `session ${request.sessionId} is not this chat's live session (${liveSession ?? "none"}); ${request.path} was not touched`,
    );
  }
  return insideRoots(files, request.path);
}

export async function readTextFile(files: FileAccess, request: acp.ReadTextFileRequest, liveSession: string | null): Promise<acp.ReadTextFileResponse> {
  const file = await checkedPath(files, request, liveSession);
  let text: string;
  try {
    text = await files.read(file);
  } catch {
    throw acp.RequestError.resourceNotFound(request.path);
  }
  return { content: sliceLines(text, request.line, request.limit) };
}

export async function writeTextFile(files: FileAccess, request: acp.WriteTextFileRequest, liveSession: string | null): Promise<acp.WriteTextFileResponse> {
  const file = await checkedPath(files, request, liveSession);
  try {
    await files.write(file, request.content);
  } catch (error) {
    throw acp.RequestError.internalError(undefined, `cannot write ${request.path}: ${(error as Error).message}`);
  }
  return {};
}
