//! The session's way out: every event goes through one [`Emitter`], in
//! order, to the front end's receiver. A front end that went away is not
//! an error; the work has no one left to tell.

use axon_protocol::AgentEvent;
use tokio::sync::mpsc;

/// Where a front end reads a session's events.
pub type Events = mpsc::UnboundedReceiver<AgentEvent>;

/// Sends events to the front end. Cheap to clone.
#[derive(Clone)]
pub struct Emitter {
    tx: mpsc::UnboundedSender<AgentEvent>,
}

impl Emitter {
    pub fn emit(&self, event: AgentEvent) {
        let _ = self.tx.send(event);
    }

    /// The event sink an agent run takes.
    pub fn sink(&self) -> impl Fn(AgentEvent) + Send + Sync + use<> {
        let tx = self.tx.clone();
        move |event| {
            let _ = tx.send(event);
        }
    }
}

/// A new event channel: the session keeps the emitter, the front end reads
/// the events.
pub fn channel() -> (Emitter, Events) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Emitter { tx }, rx)
}
