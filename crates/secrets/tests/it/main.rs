//! axon-secrets' integration tests: each kind of secret found and masked
//! (realistic samples made at run time, so no file here holds one), and
//! the usual false positives left alone.

mod kinds;
mod not_secrets;
mod samples;
