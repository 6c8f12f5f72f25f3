//! A masked secret's placeholder (`[SECRET:kind:abcd…]`) is never written
//! back over the real value: writes and edits holding one are refused with
//! the reason, and the file is left as it was.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{TestWorkspace, expect_error, expect_ok};
use serde_json::json;

const REAL: &str = "GH_TOKEN=real-value-the-model-never-saw\nDEBUG=1\n";
const PLACEHOLDER: &str = "[SECRET:github-pat:ghp_…]";

fn refused(message: &str) {
    assert!(message.contains("Refused") && message.contains("secret placeholder"), "{message}");
    assert!(message.contains("ask the user"), "{message}");
}

#[test]
fn write_edit_and_multi_edit_refuse_a_placeholder_and_touch_nothing() {
    let ws = TestWorkspace::code();
    ws.write(".env", REAL);
    let content = format!("GH_TOKEN={PLACEHOLDER}\nDEBUG=0\n");
    refused(&expect_error(&ws.call("write_file", json!({"path": ".env", "content": content}))));
    let append = json!({"path": ".env", "content": content, "mode": "append"});
    refused(&expect_error(&ws.call("write_file", append)));
    let edit = json!({"path": ".env", "old_str": format!("GH_TOKEN={PLACEHOLDER}\nDEBUG=1"),
                      "new_str": format!("GH_TOKEN={PLACEHOLDER}\nDEBUG=0")});
    refused(&expect_error(&ws.call("edit_file", edit)));
    let edit = json!({"path": ".env", "old_str": "DEBUG=1", "new_str": format!("DEBUG=1\nX={PLACEHOLDER}")});
    refused(&expect_error(&ws.call("edit_file", edit)));
    let message = expect_error(&ws.call(
        "multi_edit",
        json!({"path": ".env", "edits": [
            {"old_str": "DEBUG=1", "new_str": "DEBUG=0"},
            {"old_str": "DEBUG=0", "new_str": format!("TOKEN={PLACEHOLDER}")},
        ]}),
    ));
    assert!(message.starts_with("edit 2 of 2: Refused"), "{message}");
    refused(&message);
    assert_eq!(ws.read(".env"), REAL, "nothing was written");
    // apply_patch: as added text and as copied context alike.
    let patch = format!(
        "*** Begin Patch\n*** Update File: .env\n@@\n-DEBUG=1\n+DEBUG=0\n+K={PLACEHOLDER}\n*** End Patch"
    );
    refused(&expect_error(&ws.call("apply_patch", json!({"input": patch}))));
    let patch = format!(
        "*** Begin Patch\n*** Update File: .env\n GH_TOKEN={PLACEHOLDER}\n-DEBUG=1\n+DEBUG=0\n*** End Patch"
    );
    refused(&expect_error(&ws.call("apply_patch", json!({"input": patch}))));
    // A new file is refused too, and is not created.
    refused(&expect_error(&ws.call("write_file", json!({"path": "new.env", "content": content}))));
    assert!(!ws.path("new.env").exists());
    // The lines around the secret can still be changed.
    expect_ok(
        &ws.call("edit_file", json!({"path": ".env", "old_str": "DEBUG=1", "new_str": "DEBUG=0"})),
    );
    assert_eq!(ws.read(".env"), REAL.replace("DEBUG=1", "DEBUG=0"));
}

#[test]
fn the_preview_refuses_as_the_call_does() {
    let ws = TestWorkspace::code();
    ws.write(".env", REAL);
    let args = json!({"path": ".env", "old_str": "DEBUG=1", "new_str": format!("K={PLACEHOLDER}")});
    let preview = ws.registry.preview(&ws.ctx, "edit_file", &args);
    let args = json!({"path": ".env", "content": PLACEHOLDER});
    let write = ws.registry.preview(&ws.ctx, "write_file", &args);
    assert!(format!("{write:?}").contains("secret placeholder"), "{write:?}");
    let shown = format!("{preview:?}");
    assert!(shown.contains("secret placeholder"), "{shown}");
}
