//! The integration tests of `nova`, one binary: each module was a
//! `tests/<module>.rs` binary of its own (issue 32: one link per crate, not
//! one per file). Tests run side by side in this one process, so none may
//! change process-wide state (environment, current directory).

mod support {
    pub mod postgres;

    /// A plain HTTP client for reading the API back. reqwest is built
    /// without a default TLS provider, so the process installs ring first
    /// (as nova's own client does): a test must not count on another test
    /// in the same process having done it, since each may run alone (a
    /// filter, or cargo-nextest's process per test).
    pub fn http() -> reqwest::Client {
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::new()
    }
}
mod end_to_end;
mod generated_client;
mod http_client;
mod postgres;
mod properties;
