//! The web panel's integration tests: the server in this process, on
//! loopback, over a real runtime session whose model is the scripted one
//! (`axon_testkit`), driven in Debian's Chromium. The `axon web` binary's
//! own tests (the command line, many more panel flows) are in
//! `crates/cli/tests/it`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod images;
