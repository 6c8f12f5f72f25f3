//! The signals that end axon, caught from the moment [`Endings::listen`]
//! returns. Registering them inside a spawned task left a gap until the
//! task first ran: a SIGTERM in it took the default action and killed axon
//! with no cleanup (`axon web --open` left its token page behind). So the
//! front ends register first, then announce themselves or start work.

#[cfg(unix)]
use tokio::signal::unix::{Signal, SignalKind, signal};

// The numbers POSIX fixes for these four (Linux and macOS alike).
const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
const SIGQUIT: i32 = 3;
const SIGTERM: i32 = 15;

/// Registered listeners for SIGTERM, SIGHUP (the terminal closed), SIGQUIT
/// and, when asked for, SIGINT (Ctrl-C).
pub(crate) struct Endings {
    #[cfg(unix)]
    listeners: Vec<(Signal, i32)>,
}

impl Endings {
    /// Registers the listeners now; must run inside the async runtime.
    /// `None` when the OS refused one (then the default action stays).
    pub(crate) fn listen(with_interrupt: bool) -> Option<Self> {
        #[cfg(unix)]
        {
            let mut kinds = vec![
                (SignalKind::terminate(), SIGTERM),
                (SignalKind::hangup(), SIGHUP),
                (SignalKind::quit(), SIGQUIT),
            ];
            if with_interrupt {
                kinds.push((SignalKind::interrupt(), SIGINT));
            }
            let listeners =
                kinds.into_iter().map(|(kind, number)| Some((signal(kind).ok()?, number)));
            Some(Endings { listeners: listeners.collect::<Option<Vec<_>>>()? })
        }
        #[cfg(not(unix))]
        {
            let _ = with_interrupt;
            Some(Endings {})
        }
    }

    /// Waits for the first of the signals and returns its number.
    pub(crate) async fn next(&mut self) -> i32 {
        #[cfg(unix)]
        {
            let waits = self.listeners.iter_mut().map(|(listener, number)| {
                let number = *number;
                Box::pin(async move {
                    listener.recv().await;
                    number
                })
            });
            futures_util::future::select_all(waits).await.0
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            SIGINT
        }
    }
}
