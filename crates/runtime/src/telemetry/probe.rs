//! `axon doctor`'s look at the OTLP endpoints: one empty export to each
//! signal's URL (an empty protobuf request is a valid export of nothing,
//! which a collector accepts and records nothing for), with the
//! destination's headers.
//!
//! Guarantees: bounded by [`PROBE_TIMEOUT`] (the connection and the whole
//! exchange); nothing but that one empty request is sent; the answer's
//! body is never read.

use std::time::Duration;

use super::Destination;

/// The longest `axon doctor` waits for a collector.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// How an endpoint answered an empty export: `Ok(status)` when it
/// answered at all (2xx or not), `Err(why)` when it could not be reached.
pub async fn probe(to: &Destination) -> Result<u16, String> {
    // rustls needs a process-wide crypto provider; installing it again
    // fails harmlessly.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let builder = || {
        reqwest::Client::builder()
            .connect_timeout(PROBE_TIMEOUT)
            .timeout(PROBE_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
    };
    let client = match builder().build() {
        Ok(client) => client,
        Err(_) => builder().tls_certs_only([]).build().map_err(|e| e.to_string())?,
    };
    let mut request =
        client.post(&to.url).header("content-type", "application/x-protobuf").body(Vec::new());
    for (name, value) in &to.headers {
        request = request.header(name, value);
    }
    match request.send().await {
        Ok(response) => Ok(response.status().as_u16()),
        Err(e) => Err(super::http::with_causes(&e)),
    }
}
