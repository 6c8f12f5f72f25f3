// api.js — every HTTP request the page makes (same origin, cookie auth).
// Paths are relative: the page lives under this run's random prefix
// (/s/<random>/), the only path its cookie is sent to.
//
// Guarantees: a failed request becomes an ApiError whose message is the
// server's `{"error": ...}` text (or a plain description); a 401 anywhere
// switches the page to the "link expired" state once and for all, so
// nothing keeps retrying a dead token. Operations are sent as one JSON Op.

import { setConnection, toast } from './notify.js';

export const EXPIRED_TEXT = "This page's link expired: open the URL axon printed again";

let expired = false;

export class ApiError extends Error {}

/** True once a 401 was seen: the page stops talking to the server. */
export function isExpired() {
  return expired;
}

export function markExpired() {
  expired = true;
  setConnection(EXPIRED_TEXT, 'expired');
}

async function request(path, init = {}) {
  if (expired) throw new ApiError(EXPIRED_TEXT);
  let res;
  try {
    res = await fetch(path, { cache: 'no-store', credentials: 'same-origin', ...init });
  } catch {
    throw new ApiError('Cannot reach axon. Is `axon web` still running?');
  }
  if (res.status === 401) {
    markExpired();
    throw new ApiError(EXPIRED_TEXT);
  }
  if (!res.ok) {
    let message = '';
    try {
      const body = await res.json();
      if (body && typeof body.error === 'string') message = body.error;
    } catch {
      // Not JSON: fall back to the status line.
    }
    throw new ApiError(message || `The server answered ${res.status} ${res.statusText}`.trim());
  }
  return res;
}

/** Sends one Op; shows the error and answers false when it fails. */
export async function sendOp(op) {
  try {
    await request('api/op', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(op),
    });
    return true;
  } catch (err) {
    if (!expired) toast(err.message);
    return false;
  }
}

/** This workspace's saved sessions, newest first. */
export async function listSessions() {
  const res = await request('api/sessions');
  const list = await res.json();
  return Array.isArray(list) ? list.filter((s) => s && typeof s.id === 'string') : [];
}

export async function deleteSession(id) {
  await request(`api/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/** The workspace's files (relative paths). */
export async function listFiles() {
  const res = await request('api/files');
  const list = await res.json();
  return Array.isArray(list) ? list.filter((p) => typeof p === 'string') : [];
}

/** The open session's turns, newest first: `{turns: [{turn, changed_files, prompt}], total}`. */
export async function listTurns() {
  const res = await request('api/rewind');
  const body = await res.json();
  const turns = body && Array.isArray(body.turns) ? body.turns.filter((t) => t && Number.isInteger(t.turn)) : [];
  return { turns, total: Number(body?.total) || turns.length };
}

/**
 * What rewinding to before `turn` would do (the server reads and checks
 * `turn` and `scope` as typed): `{turn, scope, lines}`.
 */
export async function rewindPreview(turn, scope) {
  const query = scope ? `?scope=${encodeURIComponent(scope)}` : '';
  const res = await request(`api/rewind/${encodeURIComponent(turn)}${query}`);
  const body = await res.json();
  return {
    turn: Number(body?.turn),
    scope: String(body?.scope ?? 'both'),
    lines: Array.isArray(body?.lines) ? body.lines.map(String) : [],
  };
}

export function exportUrl(id) {
  return `api/sessions/${encodeURIComponent(id)}/export`;
}

/**
 * Asks whether the token still works (after the event stream failed):
 * true when the server answered 401.
 */
export async function tokenRejected() {
  try {
    const res = await fetch('api/sessions', { cache: 'no-store', credentials: 'same-origin' });
    return res.status === 401;
  } catch {
    return false;
  }
}
