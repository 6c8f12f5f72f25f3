// images.test.ts — an image pasted into the chat's prompt box in a real
// VS Code (code-server, the .vsix installed, Chromium): the webview reads
// it, the host attaches it (axon advertised image prompts), its chip shows
// the thumbnail, the prompt sends it to axon as an ACP image block and the
// model is sent it; the user's message shows it. A file that is not an
// image, dropped on the composer, is refused with a notice. The webview
// console stays clean (the thumbnails are `data:` URLs, which its CSP
// allows).

import { test } from "node:test";
import assert from "node:assert/strict";
import { Workbench } from "./support/workbench";

/** A whole 1×1 PNG, base64. */
const DOT_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

test("an image pasted into the prompt box goes to the model with the prompt and shows in the user's message", async () => {
  await Workbench.run("paste-image", { script: [{ text: "A single dot." }] }, async (bench) => {
    const panel = await bench.openPanel();
    const box = panel.locator("textarea.prompt");
    await box.click();
    // The clipboard as Chromium hands a paste to the page: a DataTransfer holding the file.
    await box.evaluate((element, b64) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], "dot.png", { type: "image/png" }));
      element.dispatchEvent(new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true }));
    }, DOT_PNG);
    const chip = panel.locator(".attachments .chip.image", { hasText: "dot.png" });
    await chip.waitFor();
    assert.equal(await chip.locator("img.chip-image").getAttribute("src"), `data:image/png;base64,${DOT_PNG}`);

    // Dropped on the composer: a text file is refused, said in the
    // transcript. With Shift held, as VS Code asks for a drop into a
    // webview (without it the workbench takes the drag for its editors).
    await panel.locator("footer").evaluate((footer) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File(["hello"], "notes.txt", { type: "text/plain" }));
      for (const type of ["dragenter", "dragover", "drop"]) {
        footer.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, shiftKey: true, bubbles: true, cancelable: true }));
      }
    });
    await panel.locator(".line.notice", { hasText: "Cannot attach notes.txt: only PNG, JPEG, GIF and WebP" }).waitFor();
    await bench.screenshot("image-attached");

    await bench.send("What is in this image?");
    await panel.locator(".message.assistant", { hasText: "A single dot." }).waitFor();
    const shown = panel.locator(".message.user img.sent-image");
    await shown.waitFor();
    assert.equal(await shown.getAttribute("src"), `data:image/png;base64,${DOT_PNG}`);
    await panel.locator(".attachments").waitFor({ state: "hidden" });
    await bench.screenshot("image-sent");
    const request = JSON.stringify(bench.model.requests[0]);
    assert.ok(request.includes(`data:image/png;base64,${DOT_PNG}`), `the image went to the model: ${request}`);
    assert.ok(request.includes("What is in this image?"), request);
    assert.deepEqual(bench.consoleProblems(), []);
  });
});
