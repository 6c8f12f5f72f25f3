//! The integration tests of `axon-webtools`, one binary. Every server is
//! made here on 127.0.0.1; nothing reaches the internet.

mod fetch;
mod search;
mod server;
