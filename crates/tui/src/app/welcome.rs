//! What the UI says when it opens: where axon works, with which model,
//! how commands are confined, and how to get help. Built from the
//! session's own description (`session_started`), never guessed.

use super::App;
use crate::transcript::Level;

impl App {
    /// Adds the welcome line (after any replayed history, so it is the
    /// last thing on the screen before the first prompt).
    pub fn welcome(&mut self) {
        let Some(info) = &self.info else { return };
        let mut parts = vec![format!("axon in {}", info.workspace)];
        parts.push(format!("model {}/{}", info.provider, info.model));
        if let Some(sandbox) = &info.sandbox {
            parts.push(crate::view::sandbox_label(sandbox, false));
        }
        if let Some(id) = &info.session_id {
            parts.push(format!("continuing session {id}"));
        }
        let text = format!(
            "{}\n/help lists keys and commands · Esc stops a turn · Ctrl-C twice quits",
            parts.join(" · ")
        );
        self.notice(Level::Info, text);
    }
}
