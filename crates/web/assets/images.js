// images.js — images pasted or dropped into the prompt box, until sent.
//
// Guarantees:
// - only PNG, JPEG, GIF and WebP files are attached; any other file, and an
//   image that would take the prompt past the server's operation limit
//   (api.rs MAX_OP, checked equal by a Rust test), is refused with a toast
//   naming the file and why, never dropped silently;
// - each attached image shows as a removable thumbnail chip above the
//   prompt (a `data:` URL: the page's CSP allows images from nothing else);
// - a sent prompt's images are kept until the runtime's `prompt` event for
//   that text arrives, so the user's own message shows them (another tab,
//   which did not send them, shows their types as chips).

import { h, icon, byId } from './dom.js';
import { toast } from './notify.js';

/** The largest operation the server accepts (api.rs MAX_OP). */
export const MAX_OP = 8 * 1024 * 1024;
/** What the prompt's text and JSON may need beside the images. */
const TEXT_ROOM = 512 * 1024;
export const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Attached, not yet sent: {name, media_type, data}. */
let attached = [];
/** Sent, waiting for their `prompt` event: {text, images}. */
const sent = [];
let tray = null;
let onChange = () => {};

/** Wires paste on `input` and drop on `zone`; `changed` runs after each change. */
export function init(input, zone, changed) {
  tray = byId('attached');
  onChange = changed;
  input.addEventListener('paste', (e) => {
    const files = [...(e.clipboardData?.files ?? [])];
    // Text that comes with a picture of itself (a spreadsheet's cells, a
    // document's lines) is a text paste: only a paste of files alone (a
    // screenshot, a copied image) attaches.
    if (!files.length || e.clipboardData.types.includes('text/plain')) return;
    e.preventDefault();
    addFiles(files);
  });
  const carriesFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes('Files');
  zone.addEventListener('dragover', (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    zone.classList.add('dropping');
  });
  zone.addEventListener('dragleave', (e) => {
    if (!zone.contains(e.relatedTarget)) zone.classList.remove('dropping');
  });
  zone.addEventListener('drop', (e) => {
    zone.classList.remove('dropping');
    if (!carriesFiles(e)) return;
    e.preventDefault();
    addFiles([...e.dataTransfer.files]);
    input.focus();
  });
  // A file dropped beside the box must not navigate away from the session.
  window.addEventListener('dragover', (e) => { if (carriesFiles(e)) e.preventDefault(); });
  window.addEventListener('drop', (e) => {
    if (!carriesFiles(e) || zone.contains(e.target)) return;
    e.preventDefault();
    toast('Drop images on the prompt box to attach them.', 'info');
  });
}

/** Attaches `files` in order; each refusal is a toast. */
export async function addFiles(files) {
  for (const file of files) {
    const name = file.name || 'pasted image';
    if (!IMAGE_TYPES.test(file.type)) {
      toast(`Cannot attach ${name}: only PNG, JPEG, GIF and WebP images can be attached (this is ${file.type || 'not an image'}).`);
      continue;
    }
    // Base64 is 4/3 of the bytes.
    const size = Math.ceil(file.size / 3) * 4;
    if (used() + size > MAX_OP - TEXT_ROOM) {
      const mb = (n) => (n / (1024 * 1024)).toFixed(1);
      toast(`Cannot attach ${name} (${mb(file.size)} MB): a prompt carries at most ${mb((MAX_OP - TEXT_ROOM) * 3 / 4)} MB of images; send a smaller image or fewer at once.`);
      continue;
    }
    let data;
    try {
      data = await read(file);
    } catch {
      toast(`Cannot read ${name}: the browser could not read the file.`);
      continue;
    }
    attached.push({ name, media_type: file.type, data });
    render();
  }
}

function used() {
  return attached.reduce((n, image) => n + image.data.length, 0);
}

function read(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      const at = url.indexOf(';base64,');
      if (at < 0) reject(new Error('no data'));
      else resolve(url.slice(at + 8));
    };
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

function render() {
  tray.replaceChildren(...attached.map((image, index) => {
    const remove = h('button', { type: 'button', class: 'icon-button remove', 'aria-label': `Remove ${image.name}`, title: 'Remove' }, icon('x'));
    remove.addEventListener('click', () => {
      attached.splice(index, 1);
      render();
    });
    return h('span', { class: 'chip image-chip', title: image.name },
      h('img', { alt: image.name, src: `data:${image.media_type};base64,${image.data}` }),
      h('span', { text: image.name }), remove);
  }));
  tray.hidden = !attached.length;
  onChange();
}

/** Whether an image waits to be sent. */
export function any() {
  return attached.length > 0;
}

/**
 * Takes the attached images for a prompt of `text` being sent: the op's
 * attachments. `restore()` puts them back when the send failed.
 */
export function take(text) {
  if (!attached.length) return { attachments: [], restore() {} };
  const images = attached;
  attached = [];
  render();
  const entry = { text, images };
  sent.push(entry);
  return {
    attachments: images.map(({ media_type, data }) => ({ type: 'image', media_type, data })),
    restore() {
      const at = sent.indexOf(entry);
      if (at >= 0) sent.splice(at, 1);
      attached = [...images, ...attached];
      render();
    },
  };
}

/** The images this page sent with the prompt `text` (the first such), once. */
export function sentWith(text) {
  const at = sent.findIndex((entry) => entry.text === text);
  if (at < 0) return [];
  return sent.splice(at, 1)[0].images;
}

/** Thumbnails of `images` ({media_type, data}) for a message; invalid ones are left out. */
export function thumbnails(images) {
  return (Array.isArray(images) ? images : [])
    .filter((p) => p && IMAGE_TYPES.test(p.media_type) && BASE64.test(p.data ?? ''))
    .map((p) => h('img', { class: 'prompt-image', alt: 'attached image', src: `data:${p.media_type};base64,${p.data}` }));
}
