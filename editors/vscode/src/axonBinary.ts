// axonBinary.ts — which axon the extension runs: the setting `axon.path`,
// else `axon` on PATH, else the one bundled in a platform-specific .vsix
// (bin/axon). Pure apart from the file checks it is given.
//
// Guarantees: a non-empty setting wins as written (a wrong one fails at
// start with the path in the message, never silently replaced); PATH is
// searched in order for an executable regular file (`axon.exe` on
// Windows); the bundled binary is used only if it is an executable regular
// file; when there is none, the command is `axon` with a hint saying every
// place looked at and how to fix it.

import * as fs from "node:fs";
import * as path from "node:path";

export type AxonBinary = {
  command: string;
  source: "setting" | "path" | "bundled" | "none";
  /** Why nothing was found, and what to do (only for `none`). */
  hint?: string;
};

export type Lookup = {
  /** The setting `axon.path` (trimmed; empty: not set). */
  configured: string;
  /** The PATH axon's environment has. */
  pathEnv: string | undefined;
  /** The extension's folder (the bundled binary is bin/axon under it). */
  extensionPath: string;
  platform: NodeJS.Platform;
  /** Whether `file` is a regular file this process may execute. */
  isExecutable?: (file: string) => boolean;
};

/** Whether `file` is a regular file this process may execute. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The bundled binary's path in the extension. */
export function bundledPath(extensionPath: string, platform: NodeJS.Platform): string {
  return path.join(extensionPath, "bin", platform === "win32" ? "axon.exe" : "axon");
}

export function resolveAxon(lookup: Lookup): AxonBinary {
  if (lookup.configured) return { command: lookup.configured, source: "setting" };
  const executable = lookup.isExecutable ?? isExecutableFile;
  const name = lookup.platform === "win32" ? "axon.exe" : "axon";
  const join = lookup.platform === "win32" ? path.win32.join : path.posix.join;
  const dirs = (lookup.pathEnv ?? "").split(lookup.platform === "win32" ? ";" : ":").filter(Boolean);
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (executable(candidate)) return { command: candidate, source: "path" };
  }
  const bundled = bundledPath(lookup.extensionPath, lookup.platform);
  if (executable(bundled)) return { command: bundled, source: "bundled" };
  const bundledNote = fs.existsSync(bundled) ? `the bundled ${bundled} is not executable` : "this .vsix bundles no axon";
  return {
    command: "axon",
    source: "none",
    hint: `no axon found: the setting axon.path is empty, ${name} is not on PATH, and ${bundledNote}; set axon.path to the axon binary, put axon on PATH, or install the .vsix for your platform that bundles it`,
  };
}
