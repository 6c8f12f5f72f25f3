//! Progress notifications for one call that carries a progress token.
//!
//! Tools report through a plain callback ([`axon_tools::ProgressSink`]);
//! notifications need an async send. A channel between the two keeps the
//! order the tool reported in, and [`Reporter::finish`] drains it before the
//! result goes out. Long calls also get a heartbeat, so a host that resets
//! its request timeout on progress (the TypeScript SDK's
//! `resetTimeoutOnProgress`) does not give up on a slow shell command.

use std::sync::Arc;
use std::time::Duration;

use axon_tools::{Progress, ProgressSink};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How often a running call says it is still running.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(1);

pub(crate) struct Reporter {
    sender: mpsc::UnboundedSender<Option<Progress>>,
    forwarder: JoinHandle<()>,
}

impl Reporter {
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let (sender, mut receiver) = mpsc::unbounded_channel::<Option<Progress>>();
        let forwarder = tokio::spawn(async move {
            let mut progress = 0.0;
            while let Some(Some(report)) = receiver.recv().await {
                // The count a host sees must grow with every notification.
                progress =
                    if report.progress > progress { report.progress } else { progress + 1.0 };
                let mut param = ProgressNotificationParam::new(token.clone(), progress);
                param.message = report.message;
                param.total = report.total;
                // A host that went away cannot be told; the call itself ends
                // through cancellation, not here.
                let _ = peer.notify_progress(param).await;
            }
        });
        Reporter { sender, forwarder }
    }

    /// The callback a tool reports through.
    pub(crate) fn sink(&self) -> ProgressSink {
        let sender = self.sender.clone();
        Arc::new(move |progress: Progress| {
            let _ = sender.send(Some(progress));
        })
    }

    fn report(&self, message: String) {
        let _ = self.sender.send(Some(Progress::message(message)));
    }

    /// Sends everything reported so far; what is reported later is dropped.
    pub(crate) async fn finish(self) {
        let _ = self.sender.send(None);
        let _ = self.forwarder.await;
    }
}

/// Reports "still running" every [`HEARTBEAT`]; never completes. Without a
/// reporter it just waits forever.
pub(crate) async fn heartbeat(reporter: Option<&Reporter>, tool: &str) {
    let Some(reporter) = reporter else {
        return std::future::pending().await;
    };
    let mut seconds = 0u64;
    loop {
        tokio::time::sleep(HEARTBEAT).await;
        seconds += HEARTBEAT.as_secs();
        reporter.report(format!("{tool}: running for {seconds} s"));
    }
}
