//! Refusing a call with a reason: at an approval question, `t` turns the
//! input into the message the model is told with the refusal ("tell it
//! what to do instead"); Enter sends it, Esc goes back to the question.
//! What the user had typed before is kept and put back.

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::{Action, App};

/// The call being refused with a reason, and the input it replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Denying {
    call_id: String,
    draft: String,
}

impl App {
    /// Starts typing the reason for refusing `call_id`.
    pub(super) fn start_denying(&mut self, call_id: String) {
        let draft = self.input.text().to_string();
        self.input.clear();
        self.completion = None;
        self.hint = Some(
            "Tell axon what to do instead · Enter refuses the call with it · Esc goes back"
                .to_string(),
        );
        self.denying = Some(Denying { call_id, draft });
    }

    /// A key while a reason is typed; `None` when no reason is being typed.
    pub(super) fn denying_key(&mut self, key: KeyEvent, ctrl: bool) -> Option<Option<Action>> {
        let denying = self.denying.take()?;
        match key.code {
            KeyCode::Esc => {
                self.restore_draft(&denying.draft);
                Some(None)
            }
            KeyCode::Enter if !self.input.text().trim().is_empty() => {
                let reason = self.input.text().trim().to_string();
                self.restore_draft(&denying.draft);
                self.approvals.retain(|id| *id != denying.call_id);
                self.asked_at = (!self.approvals.is_empty()).then(std::time::Instant::now);
                if let Some(card) = self.transcript.card_mut(&denying.call_id) {
                    card.awaiting_approval = false;
                }
                Some(Some(Action::DenyWithReason { call_id: denying.call_id, reason }))
            }
            KeyCode::Enter => {
                self.denying = Some(denying);
                Some(None)
            }
            _ => {
                self.denying = Some(denying);
                let _ = self.edit(key, ctrl);
                self.completion = None;
                Some(None)
            }
        }
    }

    fn restore_draft(&mut self, draft: &str) {
        self.input.clear();
        self.input.insert(draft);
        self.hint = None;
    }
}
