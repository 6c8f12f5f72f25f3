//! What telemetry a session exports and where: the standard OpenTelemetry
//! variables, read once into a [`TelemetryConfig`] the session is given
//! (a test hands one over directly, never through the process's
//! environment), and the user's `[telemetry]` section.
//!
//! ```toml
//! [telemetry]
//! enabled = false   # ignore the OTEL_* variables: export nothing
//! ```
//!
//! Guarantees: nothing is exported unless a variable names an endpoint
//! (`OTEL_EXPORTER_OTLP_ENDPOINT`, or `_METRICS_ENDPOINT` /
//! `_TRACES_ENDPOINT` for one signal); a workspace's config can turn export
//! off but never on, nor choose where it goes (the endpoint and headers come
//! only from the environment, `workspace_layer.rs` refuses `enabled =
//! true`); header values are secrets: never in `Debug`, in a message or in
//! a command's environment (`Effective::env_policy`), and masked by the
//! session's redactor. A variable axon cannot honour (the grpc protocol, a
//! bad URL or interval) is a problem named with its fix, never a failure.

use std::time::Duration;

use serde::Deserialize;

/// `[telemetry]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TelemetryFile {
    /// `false`: the OTEL_* variables are ignored and nothing is exported.
    pub enabled: Option<bool>,
}

impl TelemetryFile {
    pub(crate) fn merge(&mut self, other: TelemetryFile) {
        self.enabled = other.enabled.or(self.enabled);
    }

    /// A workspace layer's `[telemetry]`: it may turn export off, not on
    /// (the user's `enabled = false` stands against any repository).
    pub(crate) fn restrict_to_workspace(&mut self, refuse: &mut impl FnMut(String)) {
        if self.enabled == Some(true) {
            self.enabled = None;
            refuse("telemetry.enabled".to_string());
        }
    }
}

/// The variables holding OTLP headers: secrets, kept from commands and
/// masked in the session file.
pub const HEADER_VARIABLES: [&str; 3] = [
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
];

/// How often metrics go out when `OTEL_METRIC_EXPORT_INTERVAL` says
/// nothing (the specification's default).
const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

/// Where one signal (metrics or traces) goes.
#[derive(Clone, PartialEq, Eq)]
pub struct Destination {
    /// The full URL the exporter posts to (`…/v1/metrics`, `…/v1/traces`).
    pub url: String,
    /// Sent with every export; values are secrets.
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("Destination").field("url", &self.url).field("headers", &names).finish()
    }
}

/// What a session exports; [`TelemetryConfig::default`] exports nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// Where metrics go; `None`: no meter provider is built.
    pub metrics: Option<Destination>,
    /// Where spans go; `None`: no tracer provider is built.
    pub traces: Option<Destination>,
    /// `service.name` (`OTEL_SERVICE_NAME`, default `axon`).
    pub service_name: String,
    /// More resource attributes (`OTEL_RESOURCE_ATTRIBUTES`).
    pub resource: Vec<(String, String)>,
    /// How often metrics are exported (`OTEL_METRIC_EXPORT_INTERVAL`, in
    /// milliseconds); they are also exported when the session ends.
    pub metric_interval: Duration,
    /// Variables that could not be honoured, each with its fix: the
    /// session warns once at its start.
    pub problems: Vec<String>,
}

impl TelemetryConfig {
    /// The process's environment, unless `[telemetry] enabled = false`.
    pub fn from_env(file: &TelemetryFile) -> TelemetryConfig {
        TelemetryConfig::from_vars(file, |name| std::env::var(name).ok())
    }

    /// The variables as `var` gives them.
    pub fn from_vars(file: &TelemetryFile, var: impl Fn(&str) -> Option<String>) -> Self {
        let var = |name: &str| var(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let mut config = TelemetryConfig {
            service_name: var("OTEL_SERVICE_NAME").unwrap_or_else(|| "axon".to_string()),
            metric_interval: DEFAULT_INTERVAL,
            ..TelemetryConfig::default()
        };
        let disabled = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"));
        if file.enabled == Some(false) || disabled {
            return config;
        }
        if let Some(attributes) = var("OTEL_RESOURCE_ATTRIBUTES") {
            config.resource = pairs(&attributes);
        }
        if let Some(interval) = var("OTEL_METRIC_EXPORT_INTERVAL") {
            match interval.parse::<u64>() {
                Ok(ms) if ms > 0 => config.metric_interval = Duration::from_millis(ms),
                _ => config.problems.push(format!(
                    "OTEL_METRIC_EXPORT_INTERVAL={interval} is not a number of milliseconds \
                     above 0: metrics go out every 60 s (set it to e.g. 10000)"
                )),
            }
        }
        let mut problems = Vec::new();
        config.metrics = destination(&var, "METRICS", "v1/metrics", &mut problems);
        config.traces = destination(&var, "TRACES", "v1/traces", &mut problems);
        config.problems.extend(problems);
        config
    }

    /// The values of headers that carry credentials, for the session's
    /// redactor (masking every value would also hide ordinary words, as
    /// for MCP servers' headers).
    pub fn secret_values(&self) -> Vec<String> {
        let destinations = self.metrics.iter().chain(&self.traces);
        destinations
            .flat_map(|to| &to.headers)
            .filter(|(name, _)| {
                let name = name.to_ascii_lowercase();
                ["auth", "key", "token", "secret", "cookie"].iter().any(|k| name.contains(k))
            })
            .map(|(_, value)| value.clone())
            .collect()
    }

    /// Whether anything is exported at all.
    pub fn exports(&self) -> bool {
        self.metrics.is_some() || self.traces.is_some()
    }
}

/// One signal's destination: its own endpoint variable (used as is), else
/// the common one with the signal's path, as the OTLP exporter
/// specification says; `None` when neither is set or it cannot be used.
fn destination(
    var: &impl Fn(&str) -> Option<String>,
    signal: &str,
    path: &str,
    problems: &mut Vec<String>,
) -> Option<Destination> {
    let exporter = format!("OTEL_{signal}_EXPORTER");
    if var(&exporter).is_some_and(|v| v.eq_ignore_ascii_case("none")) {
        return None;
    }
    let own = format!("OTEL_EXPORTER_OTLP_{signal}_ENDPOINT");
    let (name, url) = match (var(&own), var("OTEL_EXPORTER_OTLP_ENDPOINT")) {
        (Some(url), _) => (own, url),
        (None, Some(base)) => (
            "OTEL_EXPORTER_OTLP_ENDPOINT".to_string(),
            format!("{}/{path}", base.trim_end_matches('/')),
        ),
        (None, None) => return None,
    };
    let protocol_var = format!("OTEL_EXPORTER_OTLP_{signal}_PROTOCOL");
    let protocol = var(&protocol_var).or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"));
    if let Some(protocol) = protocol.filter(|p| p != "http/protobuf") {
        problems.push(format!(
            "{} are not exported: OTLP protocol `{protocol}` is not supported; axon exports \
             over http/protobuf. Set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf and point {name} \
             at the collector's OTLP/HTTP port (4318 by default)",
            signal.to_ascii_lowercase()
        ));
        return None;
    }
    let scheme_ok = url.parse::<http::Uri>().ok().is_some_and(|uri| {
        matches!(uri.scheme_str(), Some("http" | "https")) && uri.host().is_some()
    });
    if !scheme_ok {
        problems.push(format!(
            "{} are not exported: {name} is not an http(s) URL (e.g. http://localhost:4318)",
            signal.to_ascii_lowercase()
        ));
        return None;
    }
    let headers = var(&format!("OTEL_EXPORTER_OTLP_{signal}_HEADERS"))
        .or_else(|| var("OTEL_EXPORTER_OTLP_HEADERS"))
        .map(|text| pairs(&text))
        .unwrap_or_default();
    Some(Destination { url, headers })
}

/// `key=value,key2=value2` with percent-encoded values (the format of
/// `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_RESOURCE_ATTRIBUTES`); a pair
/// without `=` or a key is skipped.
pub(crate) fn pairs(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            let key = key.trim();
            (!key.is_empty()).then(|| (percent_decoded(key), percent_decoded(value.trim())))
        })
        .collect()
}

/// `%XX` escapes decoded; a malformed escape stays as written.
fn percent_decoded(text: &str) -> String {
    percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> TelemetryConfig {
        TelemetryConfig::from_vars(&TelemetryFile::default(), |name| {
            vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn nothing_is_exported_without_an_endpoint() {
        let config = read(&[("OTEL_EXPORTER_OTLP_HEADERS", "a=b")]);
        assert!(!config.exports());
        assert_eq!(config.service_name, "axon");
    }

    #[test]
    fn the_common_endpoint_gets_each_signals_path_and_a_signals_own_is_kept() {
        let config = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://traces.example/x"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20abc, x-team = core"),
        ]);
        let metrics = config.metrics.unwrap();
        assert_eq!(metrics.url, "http://collector:4318/v1/metrics");
        assert_eq!(
            metrics.headers,
            vec![("Authorization".into(), "Bearer abc".into()), ("x-team".into(), "core".into())]
        );
        assert_eq!(config.traces.unwrap().url, "https://traces.example/x");
    }

    #[test]
    fn grpc_is_refused_with_the_fix_and_header_values_stay_out_of_debug() {
        let config = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=s3cr3t-value"),
        ]);
        assert!(config.traces.is_none());
        assert!(config.problems[0].contains("`grpc` is not supported"), "{:?}", config.problems);
        assert!(config.problems[0].contains("OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"));
        let shown = format!("{config:?}");
        assert!(shown.contains("api-key") && !shown.contains("s3cr3t-value"), "{shown}");
    }

    #[test]
    fn enabled_false_and_sdk_disabled_turn_everything_off() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
        let off = TelemetryFile { enabled: Some(false) };
        let config = TelemetryConfig::from_vars(&off, |name| {
            (name == endpoint.0).then(|| endpoint.1.to_string())
        });
        assert!(!config.exports());
        assert!(!read(&[endpoint, ("OTEL_SDK_DISABLED", "true")]).exports());
        assert!(read(&[endpoint, ("OTEL_METRICS_EXPORTER", "none")]).metrics.is_none());
    }

    #[test]
    fn resource_attributes_interval_and_bad_urls() {
        let config = read(&[
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "collector:4318"),
            ("OTEL_RESOURCE_ATTRIBUTES", "team=core,deployment.environment=dev%2Cci,broken"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "soon"),
        ]);
        assert!(config.metrics.is_none());
        assert_eq!(
            config.resource,
            vec![
                ("team".into(), "core".into()),
                ("deployment.environment".into(), "dev,ci".into())
            ]
        );
        assert_eq!(config.metric_interval, Duration::from_secs(60));
        assert_eq!(config.problems.len(), 2, "{:?}", config.problems);
    }
}
