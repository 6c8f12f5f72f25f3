// images.ts — which images the panels attach, shared by the extension host
// (attachments.ts) and the webview (composer.ts, which checks a file before
// it reads it). Pure: no vscode, no node, no DOM.
//
// Guarantees: only PNG, JPEG, GIF and WebP (the types every model API
// takes; axon checks the bytes again) and at most MAX_IMAGE_BYTES each;
// a refusal names the file and says why.

/** The image types every model API takes (and axon checks by their bytes). */
export const IMAGE_TYPES: readonly string[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/** The largest image attached (axon's MAX_IMAGE_FILE_BYTES: it scales what it is sent to the model's limits). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
/** The base64 of one prompt's images together (axon reads ACP lines of at most 64 MiB). */
export const MAX_PROMPT_IMAGES_CHARS = 48 * 1024 * 1024;

/** "1.5 MB" */
export function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * Why an image of `mimeType` and `bytes` cannot be attached (null: it can).
 * The panel asks this before reading a file; the host again on what it is sent.
 */
export function imageRefusal(name: string, mimeType: string, bytes: number): string | null {
  if (!IMAGE_TYPES.includes(mimeType)) {
    return `Cannot attach ${name}: only PNG, JPEG, GIF and WebP images can be attached (this is ${mimeType || "not an image"}).`;
  }
  if (bytes > MAX_IMAGE_BYTES) {
    return `Cannot attach ${name}: the image is ${megabytes(bytes)}, over the ${megabytes(MAX_IMAGE_BYTES)} limit; scale it down first.`;
  }
  return null;
}
