// attention.ts — what the user is told outside the panel (a VS Code
// notification) when axon waits on them or finishes while they look
// elsewhere, in the same words as the terminal UI and the web panel.
//
// Guarantees: pure (no vscode): the words for a permission question and for
// a turn's end; a cancelled turn (the user pressed Stop) is not news; the
// text is one line with no control characters and at most 200 characters,
// whatever a tool's title holds.

const MAX_CHARS = 200;

function oneLine(text: string): string {
  return Array.from(text.replace(/[\u0000-\u001f\u007f-\u009f]/g, " ")).slice(0, MAX_CHARS).join("");
}

/** The words for a permission question about the call titled `title`. */
export function permissionMessage(title: string | null | undefined): string {
  return oneLine(`axon needs your permission: ${title?.trim() || "a tool call"}`);
}

/** The words for a turn that ended with `stopReason`, or null when it is not news. */
export function turnEndMessage(stopReason: string): string | null {
  switch (stopReason) {
    case "cancelled":
      return null;
    case "end_turn":
      return "axon has finished";
    default:
      return oneLine(`axon stopped (${stopReason.replace(/_/g, " ")})`);
  }
}

/** Whether to notify: the setting allows it and the user is not looking at the panel. */
export function shouldNotify(enabled: boolean, windowFocused: boolean, panelVisible: boolean): boolean {
  return enabled && !(windowFocused && panelVisible);
}
