//! `axon doctor`: what would go wrong before the user hits it.
//!
//! Guarantees:
//! - Read-only but for what a session would do anyway: it starts the MCP
//!   servers a session here would start without asking (the user's, and the
//!   workspace's the user trusted) and stops them; it never starts an
//!   untrusted workspace server, loads a model or calls a provider.
//! - Bounded: every server gets at most `mcp_wait` (they start in the
//!   background, together), the sandbox self-test is one short command,
//!   each OTLP endpoint one empty export within `telemetry::PROBE_TIMEOUT`.
//! - Every [`Finding`] that is not [`Status::Ok`] carries the fix, and a
//!   [`Status::Problem`] is only what stops axon's main job (a task in this
//!   folder with the configured provider) from running at all.

use std::path::Path;
use std::time::Duration;

use axon_llm::ProviderKind;
use axon_mcp::McpManager;
use axon_models::ModelStore;
use axon_protocol::SandboxMode;

use crate::config::{Dirs, Effective, Overrides, mask};

/// How a finding weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// Worth knowing; axon runs.
    Note,
    /// Something will fail or run less safely than configured; the main
    /// job still runs.
    Warning,
    /// The main job cannot run until it is fixed.
    Problem,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What was checked: `cpu`, `config`, `provider`, `models`, `sandbox`,
    /// `web`, `telemetry`, `mcp`, `folders`.
    pub area: &'static str,
    pub status: Status,
    pub text: String,
    /// What to do, for anything not `Ok`.
    pub fix: Option<String>,
}

impl Finding {
    fn ok(area: &'static str, text: impl Into<String>) -> Finding {
        Finding { area, status: Status::Ok, text: text.into(), fix: None }
    }

    fn with(area: &'static str, status: Status, text: impl Into<String>, fix: &str) -> Finding {
        let fix = (!fix.is_empty()).then(|| fix.to_string());
        Finding { area, status, text: text.into(), fix }
    }
}

/// Everything checked for `workspace`, in the order a user would fix it.
pub async fn diagnose(workspace: &Path, overrides: &Overrides, mcp_wait: Duration) -> Vec<Finding> {
    let mut found = Vec::new();
    let dirs = match Dirs::from_env() {
        Ok(dirs) => dirs,
        Err(e) => {
            found.push(Finding::with("folders", Status::Problem, format!("{e:#}"), ""));
            return found;
        }
    };
    let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let config = match Effective::load(&dirs, &root) {
        Ok(config) => config,
        Err(e) => {
            found.push(Finding::with(
                "config",
                Status::Problem,
                format!("{e:#}"),
                "correct the file it names (`axon config show` prints what is in effect)",
            ));
            return found;
        }
    };
    found.extend(folders(&dirs));
    found.extend(config_files(&config, &dirs));
    let local = provider(&config, overrides, &mut found);
    found.extend(models(&config.data, local));
    found.push(cpu(local));
    found.extend(sandbox(&config, &root, &dirs));
    found.extend(web(&config.file.web));
    let otel = crate::telemetry::TelemetryConfig::from_env(&config.file.telemetry);
    found.extend(telemetry(&otel, config.file.telemetry.enabled == Some(false)).await);
    found.extend(mcp(config, &root, &dirs, mcp_wait).await);
    found
}

/// Whether any finding stops the main job.
pub fn has_problem(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.status == Status::Problem)
}

fn folders(dirs: &Dirs) -> Vec<Finding> {
    let mut found = Vec::new();
    for (what, path) in [("data", &dirs.data), ("cache", &dirs.cache)] {
        found.push(match writable(path) {
            Ok(()) => Finding::ok("folders", format!("{what} folder {}", path.display())),
            Err(e) => Finding::with(
                "folders",
                if what == "data" { Status::Problem } else { Status::Warning },
                format!("the {what} folder {} cannot be written: {e}", path.display()),
                "make it writable by you, or set AXON_HOME to a folder that is",
            ),
        });
    }
    found
}

/// Whether `path` exists (or can be made) and takes a new file.
fn writable(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(path)?;
    tempfile::NamedTempFile::new_in(path).map(drop)
}

fn config_files(config: &Effective, dirs: &Dirs) -> Vec<Finding> {
    let mut found = Vec::new();
    let read: Vec<String> = config.sources.iter().map(|p| p.display().to_string()).collect();
    found.push(if read.is_empty() {
        Finding::with(
            "config",
            Status::Note,
            format!("no config file (yours would be {})", dirs.config_file.display()),
            "",
        )
    } else {
        Finding::ok("config", format!("read {}", read.join(", ")))
    });
    for refused in &config.refused {
        found.push(Finding::with("config", Status::Warning, refused.clone(), ""));
    }
    found
}

/// The provider a task here would use; true when it is the local model.
fn provider(config: &Effective, overrides: &Overrides, found: &mut Vec<Finding>) -> bool {
    let chosen = match config.provider(overrides) {
        Ok(chosen) => chosen,
        Err(e) if e.downcast_ref::<crate::NoProvider>().is_some() => {
            let keys: Vec<&str> =
                axon_llm::PROVIDERS.iter().filter(|p| p.detect).map(|p| p.key_var).collect();
            found.push(Finding::with(
                "provider",
                Status::Problem,
                "none: no provider is configured, no API key is set and no local model is pulled",
                &format!(
                    "export {}=... (or {}), or `axon models pull` for a model that runs here",
                    keys.first().copied().unwrap_or("DEEPSEEK_API_KEY"),
                    keys.get(1..).unwrap_or_default().join(", ")
                ),
            ));
            return false;
        }
        Err(e) => {
            // The other messages name the setting and what to put there.
            found.push(Finding::with("provider", Status::Problem, format!("{e:#}"), ""));
            return false;
        }
    };
    if chosen.kind == ProviderKind::Local {
        let model = if chosen.model.is_empty() { "the pulled model" } else { &chosen.model };
        found.push(Finding::ok("provider", format!("local ({model}, run inside axon)")));
        return true;
    }
    let key = match (&chosen.api_key, chosen.requires_key) {
        (Some(key), _) => format!("key {} from ${}", mask(key), chosen.api_key_env),
        (None, false) => "no key needed".to_string(),
        (None, true) => {
            found.push(Finding::with(
                "provider",
                Status::Problem,
                format!("{} needs an API key and ${} is not set", chosen.name, chosen.api_key_env),
                &format!(
                    "export {}=... (or choose another with --provider; `axon models pull` for a model that needs no key)",
                    chosen.api_key_env
                ),
            ));
            return false;
        }
    };
    found.push(Finding::ok(
        "provider",
        format!("{} at {}, model {}, {key}", chosen.name, chosen.base_url, chosen.model),
    ));
    false
}

fn models(data: &Path, local: bool) -> Vec<Finding> {
    let store = ModelStore::new(data);
    match store.list() {
        Ok(models) if models.is_empty() => vec![Finding::with(
            "models",
            if local { Status::Problem } else { Status::Note },
            format!("no local model is pulled (store: {})", store.dir().display()),
            "axon models pull   (SmolLM2-135M, about 100 MB; runs without a key or network)",
        )],
        Ok(models) => models
            .iter()
            .map(|m| {
                Finding::ok("models", format!("{} ({} MB)", m.name, m.size.div_ceil(1_000_000)))
            })
            .collect(),
        Err(e) => vec![Finding::with(
            "models",
            if local { Status::Problem } else { Status::Warning },
            format!("the model store cannot be read: {e}"),
            "pull the model again with `axon models pull`",
        )],
    }
}

fn cpu(local: bool) -> Finding {
    let summary = crate::local_model::cpu_summary();
    if !crate::local_model::IN_THIS_BUILD {
        return Finding::with(
            "cpu",
            if local { Status::Problem } else { Status::Note },
            summary,
            crate::local_model::how_to_get_it(),
        );
    }
    if crate::local_model::cpu_supported() {
        return Finding::ok("cpu", format!("local model built for {summary}"));
    }
    Finding::with(
        "cpu",
        if local { Status::Problem } else { Status::Warning },
        format!("local model built for {summary}"),
        "use a provider over HTTP, or build axon on this machine with CFLAGS=-march=native CXXFLAGS=-march=native GGML_NATIVE=ON cargo build --release",
    )
}

/// Which search API `web_search` asks (or how to add one), and whether
/// `web_fetch` may reach private addresses.
pub(crate) fn web(web: &crate::web_config::WebFile) -> Vec<Finding> {
    let mut found = vec![match web.search_config() {
        Ok(Some(search)) => Finding::ok(
            "web",
            match (&search.api_key_env, &search.api_key) {
                (Some(var), Some(key)) => {
                    format!("web_search: {} (key {var} = {})", search.backend.name(), mask(key))
                }
                _ => format!("web_search: {} at {}", search.backend.name(), search.endpoint),
            },
        ),
        Ok(None) => Finding::with(
            "web",
            Status::Note,
            "web_search is not offered: no search API is configured",
            crate::web_config::SEARCH_HOWTO,
        ),
        Err(why) => Finding::with("web", Status::Warning, why, crate::web_config::SEARCH_HOWTO),
    }];
    let policy = web.fetch_config().policy;
    if policy.allow_private {
        found.push(Finding::with(
            "web",
            Status::Note,
            "web_fetch may reach loopback and private addresses (`[web] allow_private = true`)",
            "list only the hosts you need in `[web] private_hosts` instead",
        ));
    } else if !policy.private_hosts.is_empty() {
        found.push(Finding::ok(
            "web",
            format!(
                "web_fetch may reach these hosts at private addresses: {}",
                policy.private_hosts.join(", ")
            ),
        ));
    }
    found
}

/// Whether usage and cost go out over OTLP, where, and whether each
/// endpoint answers; `off` is the user's `[telemetry] enabled = false`.
/// An endpoint that cannot be reached is a warning, never a problem:
/// telemetry is not needed for the main job.
pub async fn telemetry(config: &crate::telemetry::TelemetryConfig, off: bool) -> Vec<Finding> {
    const FIX: &str = "start an OTLP/HTTP collector there (port 4318 by default), point \
                       OTEL_EXPORTER_OTLP_ENDPOINT at one, or unset it to export nothing (axon \
                       works without it)";
    let mut found: Vec<Finding> = config
        .problems
        .iter()
        .map(|problem| Finding::with("telemetry", Status::Warning, problem.clone(), ""))
        .collect();
    if !config.exports() {
        found.push(Finding::ok(
            "telemetry",
            if off {
                "OpenTelemetry export is off (`[telemetry] enabled = false`)"
            } else {
                "OpenTelemetry export is off (OTEL_EXPORTER_OTLP_ENDPOINT is not set)"
            },
        ));
        return found;
    }
    let signals = [("metrics", &config.metrics), ("traces", &config.traces)];
    let probes = signals.iter().filter_map(|(signal, to)| {
        let to = to.as_ref()?;
        Some(async move { (*signal, to, crate::telemetry::probe(to).await) })
    });
    for (signal, to, answer) in futures_util::future::join_all(probes).await {
        let url = &to.url;
        found.push(match answer {
            Ok(status) if (200..300).contains(&status) => Finding::ok(
                "telemetry",
                format!("{signal} go to {url} (OTLP/HTTP; it answered {status})"),
            ),
            Ok(status @ (401 | 403)) => Finding::with(
                "telemetry",
                Status::Warning,
                format!("{signal} go to {url}, which refuses them ({status})"),
                "set the credentials it expects in OTEL_EXPORTER_OTLP_HEADERS (e.g. \
                 Authorization=Bearer%20TOKEN)",
            ),
            Ok(status) => Finding::with(
                "telemetry",
                Status::Warning,
                format!("{signal} go to {url}, which answered {status} to an empty export"),
                FIX,
            ),
            Err(why) => Finding::with(
                "telemetry",
                Status::Warning,
                format!("{signal} go to {url}, which cannot be reached: {why}"),
                FIX,
            ),
        });
    }
    found
}

fn sandbox(config: &Effective, root: &Path, dirs: &Dirs) -> Vec<Finding> {
    let choice = match crate::sandbox::Choice::new(config, None) {
        Ok(choice) => choice,
        Err(e) => {
            return vec![Finding::with(
                "sandbox",
                Status::Problem,
                format!("{e:#}"),
                "correct [sandbox] in the config",
            )];
        }
    };
    if choice.mode == SandboxMode::Off {
        return vec![Finding::with(
            "sandbox",
            Status::Warning,
            "off: commands run with your full rights",
            "remove `mode = \"off\"` under [sandbox] to confine commands to the workspace",
        )];
    }
    let support = axon_sandbox::probe();
    let setup = match crate::sandbox::setup(&choice, root, &support, dirs) {
        Ok(setup) => setup,
        Err(e) => {
            return vec![Finding::with("sandbox", Status::Problem, format!("{e:#}"), "")];
        }
    };
    let mut found = Vec::new();
    if let Some(warning) = &setup.warning {
        found.push(Finding::with("sandbox", Status::Warning, warning.clone(), ""));
    }
    let Some(tool) = setup.tool else {
        found.push(Finding::with(
            "sandbox",
            Status::Warning,
            format!("{} is not enforced here: {}", choice.summary(), setup.info.detail),
            "every command will be asked about; `axon sandbox check` shows what this kernel lacks",
        ));
        return found;
    };
    found.push(match axon_sandbox::self_test(tool.policy()) {
        Ok(()) => Finding::ok(
            "sandbox",
            format!("{}: enforced ({})", choice.summary(), setup.info.detail),
        ),
        Err(e) => Finding::with(
            "sandbox",
            Status::Warning,
            format!("{}: the self-test failed: {e}", choice.summary()),
            "`axon sandbox check` for details",
        ),
    });
    found
}

async fn mcp(config: Effective, root: &Path, dirs: &Dirs, wait: Duration) -> Vec<Finding> {
    let mut found = Vec::new();
    let sandbox_setup = crate::sandbox::Choice::new(&config, None)
        .and_then(|choice| crate::sandbox::setup(&choice, root, &axon_sandbox::probe(), dirs))
        .ok();
    let store = crate::servers::TrustStore { data: &dirs.data, workspace: root };
    let mut servers = config.user_servers;
    for server in config.workspace_servers {
        if store.trusts(&server) {
            servers.push(server);
        } else {
            found.push(Finding::with(
                "mcp",
                Status::Note,
                format!("{} (from {}) is not trusted, so not started", server.name, server.source),
                &format!("axon mcp trust {}", server.name),
            ));
        }
    }
    if servers.is_empty() {
        if found.is_empty() {
            found.push(Finding::ok("mcp", "no MCP servers configured"));
        }
        return found;
    }
    // Servers that ask for the sandbox get the one a session would give.
    if let Some(setup) = sandbox_setup {
        crate::sandbox::resolve_servers(&mut servers, &setup);
    }
    axon_mcp::auth::locate_tokens(&mut servers, &dirs.data);
    let manager = McpManager::spawn(servers, root, None);
    let _ = tokio::time::timeout(wait, manager.wait_for_all()).await;
    for status in manager.statuses() {
        let (state, detail) = crate::servers::describe_state(&status);
        let detail = detail.unwrap_or_default();
        found.push(match state {
            axon_protocol::McpState::Ready => {
                Finding::ok("mcp", format!("{}: ready ({detail})", status.name))
            }
            axon_protocol::McpState::Connecting => Finding::with(
                "mcp",
                Status::Warning,
                format!("{}: still starting after {} s", status.name, wait.as_secs()),
                "a session waits for it in the background; raise `startup_timeout_ms` if it never gets ready",
            ),
            axon_protocol::McpState::NeedsLogin => Finding::with(
                "mcp",
                Status::Warning,
                format!("{}: needs login", status.name),
                &axon_mcp::auth::login_command(&status.name),
            ),
            _ => Finding::with(
                "mcp",
                Status::Warning,
                format!("{}: failed: {detail}", status.name),
                &format!("axon mcp list -C {} shows its error in full", root.display()),
            ),
        });
    }
    manager.shutdown().await;
    found
}
