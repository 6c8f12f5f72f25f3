// app.js — the page's entry point: wires the modules and opens the stream.
//
// Guarantees: every module is initialised once, before the first event is
// applied; Esc closes what is open (completion popup, drawer, server
// details) before it stops a running turn; nothing here renders content.

import * as transcript from './transcript.js';
import * as header from './header.js';
import * as sidebar from './sidebar.js';
import * as plan from './plan.js';
import * as todos from './todos.js';
import * as attention from './attention.js';
import * as input from './input.js';
import * as complete from './complete.js';
import * as events from './events.js';
import * as stream from './stream.js';
import { state } from './state.js';
import { byId } from './dom.js';

function onGlobalKey(e) {
  if (e.key !== 'Escape' || e.defaultPrevented || e.isComposing) return;
  if (complete.isOpen()) {
    complete.close();
  } else if (sidebar.isDrawerOpen()) {
    sidebar.setOpen(false);
    byId('sidebar-toggle').focus();
  } else if (document.querySelector('#servers .server.open')) {
    header.closeServerPopups();
  } else if (state.running) {
    input.stop();
  } else {
    return;
  }
  e.preventDefault();
}

function main() {
  transcript.init();
  attention.init();
  header.init();
  sidebar.init();
  plan.init();
  todos.init();
  input.init();
  header.reset();
  document.addEventListener('keydown', onGlobalKey);
  stream.start({ onReset: events.onReset, onEvent: events.onEvent });
  input.focus();
}

main();
