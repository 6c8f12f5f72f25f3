//! The session's way out: every event goes through one [`Emitter`], in
//! order, to the front end's receiver. A front end that went away is not
//! an error; the work has no one left to tell.

use std::sync::{Arc, OnceLock};

use axon_protocol::AgentEvent;
use tokio::sync::mpsc;

/// Where a front end reads a session's events.
pub type Events = mpsc::UnboundedReceiver<AgentEvent>;

/// What the session does on its own side as an event goes out (its
/// Notification hooks when the event waits on the user); called before the
/// event is sent, from whichever task emits it, so it must not block.
pub(crate) type Watch = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// Sends events to the front end. Cheap to clone; every clone shares the
/// session's [`Watch`], set once the session is built.
#[derive(Clone)]
pub struct Emitter {
    tx: mpsc::UnboundedSender<AgentEvent>,
    watch: Arc<OnceLock<Watch>>,
}

impl Emitter {
    pub fn emit(&self, event: AgentEvent) {
        if let Some(watch) = self.watch.get() {
            watch(&event);
        }
        let _ = self.tx.send(event);
    }

    /// The event sink an agent run takes.
    pub fn sink(&self) -> impl Fn(AgentEvent) + Send + Sync + use<> {
        let emitter = self.clone();
        move |event| emitter.emit(event)
    }

    /// An emitter that does not keep the stream open: a handle that
    /// outlives the session must not stop its front end from seeing the end.
    pub(crate) fn downgrade(&self) -> WeakEmitter {
        WeakEmitter { tx: self.tx.downgrade(), watch: Arc::clone(&self.watch) }
    }

    /// Every clone of this emitter calls `watch` on each event from now
    /// on; a second watch is ignored (a session has one).
    pub(crate) fn watch(&self, watch: Watch) {
        let _ = self.watch.set(watch);
    }
}

/// [`Emitter::downgrade`]: emits while the session's own emitters live.
#[derive(Clone)]
pub(crate) struct WeakEmitter {
    tx: mpsc::WeakUnboundedSender<AgentEvent>,
    watch: Arc<OnceLock<Watch>>,
}

impl WeakEmitter {
    pub(crate) fn emit(&self, event: AgentEvent) {
        if let Some(tx) = self.tx.upgrade() {
            Emitter { tx, watch: Arc::clone(&self.watch) }.emit(event);
        }
    }
}

/// A new event channel: the session keeps the emitter, the front end reads
/// the events.
pub fn channel() -> (Emitter, Events) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Emitter { tx, watch: Arc::default() }, rx)
}
