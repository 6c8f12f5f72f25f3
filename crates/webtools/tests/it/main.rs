//! The integration tests of `axon-webtools`, one binary. Every server is
//! made here on 127.0.0.1; nothing reaches the internet.

mod fetch;
#[path = "../../../tools/tests/it/pdf_fixture.rs"]
mod pdf_fixture;
mod search;
mod server;
