//! axon's in-process model: a GGUF file run by llama.cpp, behind the same
//! [`Provider`] trait as the HTTP providers.
//!
//! Guarantees:
//! - Loading fails with a message naming the file and what to do (damaged
//!   or unknown model, a context window too large for memory); nothing is
//!   loaded lazily behind the first request's back.
//! - One worker thread owns the model's context and runs one generation at
//!   a time; requests queue. It keeps the last prompt's tokens in the KV
//!   cache and evaluates only what differs, so an agent's next turn (the
//!   same history plus a tool result) starts in the time of the new part.
//! - Tokens stream as they are sampled. Dropping the stream, or its
//!   consumer going away, stops generation before the next token.
//! - Prompts use the model's own chat template ([`template`]); calls are
//!   written in the template's format when it has one, else in axon's text
//!   protocol; either way a started call is held to the tools' schemas by a
//!   lazy grammar ([`grammar`]).
//! - Library code never prints: llama.cpp's own logging is switched off.

pub mod cpu;
pub mod grammar;
pub mod template;
#[cfg(feature = "cpu-variants")]
pub mod variants;
mod worker;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axon_llm::tool_text::{CallFormat, with_text_calls};
use axon_llm::{EventStream, LlmError, Provider, ProviderInfo, ProviderRequest, ToolProtocol};
use futures_util::StreamExt;

pub use grammar::CallSyntax;
use worker::{Job, Worker};

/// The name the provider goes by in configs and messages.
pub const PROVIDER: &str = "local";

/// How a local model is run.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalConfig {
    pub model_path: PathBuf,
    /// The name shown for the model (its store name).
    pub model_name: String,
    /// CPU threads; `None`: every core.
    pub threads: Option<usize>,
    /// Tokens of context; `None`: the model's trained window, at most
    /// [`DEFAULT_MAX_WINDOW`].
    pub context_window: Option<u32>,
    /// Layers offloaded to a GPU, where this build has a GPU backend.
    pub gpu_layers: u32,
    /// Sampling seed, for repeatable answers.
    pub seed: u32,
    /// The temperature of a request that sets none (`None`: 0.2; 0:
    /// greedy).
    pub temperature: Option<f32>,
    /// The output limit of a request that sets none (`Some(0)`: none but
    /// the window; `None`: a fifth of the window).
    pub max_tokens: Option<u32>,
}

/// The default window's ceiling: larger windows cost memory on every
/// model, and most GGUF files claim more than a laptop should spend.
pub const DEFAULT_MAX_WINDOW: u32 = 16_384;

/// Why a local model could not be started.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LocalError {
    #[error(
        "cannot load the model {path}: llama.cpp refused it ({detail}). The file may be damaged (pull it again with `axon models pull`) or its architecture{arch} may be newer than this build of llama.cpp (update axon)"
    )]
    Load { path: String, arch: String, detail: String },
    #[error(
        "cannot make a context of {window} tokens for {path}: llama.cpp could not allocate it (too little memory for this window, or for this model). Set a smaller `context_window` under [providers.local] in the config"
    )]
    Context { path: String, window: u32 },
    #[error("cannot open the model {path}: {detail}. `axon models list` shows the pulled models")]
    Missing { path: String, detail: String },
    #[error(
        "context_window = 0 for {path}: set a positive number of tokens, or remove it for the model's own"
    )]
    Window { path: String },
    #[error("{0}")]
    Template(String),
    #[error(
        "this CPU lacks {missing}, which this build of the local model needs (it was compiled for {variant}). Use a provider over HTTP (`axon run --provider deepseek`, or Ollama/llama-server with `--provider ollama`), or build axon on this machine for its own CPU: `CFLAGS=-march=native CXXFLAGS=-march=native GGML_NATIVE=ON cargo build --release`"
    )]
    Cpu { variant: String, missing: String },
    #[error(
        "the local model cannot start: {detail}. Install axon again from its package (the archive, wheel or npm package carries lib/axon/ beside the binary), or use a provider over HTTP (`axon run --provider deepseek`)"
    )]
    Variants { detail: String },
    #[error("the local model's worker thread could not start: {0}")]
    Thread(String),
}

/// A loaded model, ready to stream answers.
pub struct LocalProvider {
    info: ProviderInfo,
    syntax: CallSyntax,
    /// Whether started calls are held to a grammar.
    grammar: bool,
    template: template::ChatTemplate,
    worker: Worker,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
}

impl std::fmt::Debug for LocalProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalProvider").field("info", &self.info).finish_non_exhaustive()
    }
}

impl LocalProvider {
    /// Loads the model and makes its context. Blocking: seconds for a big
    /// model; call it off the async runtime.
    pub fn load(config: &LocalConfig) -> Result<Self, LocalError> {
        let loaded = worker::start(config)?;
        let source = loaded.chat_template.as_deref();
        let syntax =
            source.and_then(CallFormat::detect).map_or(CallSyntax::Fence, CallSyntax::Model);
        // Calls the JSON grammar would misshape: Qwen3-Coder's XML inside
        // <tool_call>, Mistral's newer NAME[ARGS]{…}. The parser reads them.
        let grammar = !source.is_some_and(|s| s.contains("<function=") || s.contains("[ARGS]"));
        let template = template::ChatTemplate::new(source, &loaded.bos, &loaded.eos)
            .map_err(LocalError::Template)?;
        let tool_protocol = match syntax {
            CallSyntax::Fence => ToolProtocol::Text,
            CallSyntax::Model(_) => ToolProtocol::Native,
        };
        Ok(LocalProvider {
            info: ProviderInfo {
                name: PROVIDER.into(),
                model: config.model_name.clone(),
                context_window: u64::from(loaded.window),
                tool_protocol,
            },
            syntax,
            grammar,
            template,
            worker: loaded.worker,
            // A fifth of the window by default, as for other small-window
            // servers: a small model stuck repeating itself stops soon.
            temperature: config.temperature,
            max_tokens: match config.max_tokens {
                Some(0) => None,
                Some(n) => Some(n),
                None => Some((loaded.window / 5).clamp(256, 8192)),
            },
        })
    }

    /// How this model writes tool calls.
    pub fn syntax(&self) -> CallSyntax {
        self.syntax
    }

    /// The prompt text a request becomes (the chat template applied).
    pub fn prompt_for(&self, request: &ProviderRequest<'_>) -> Result<String, LocalError> {
        self.template
            .render(&request.system, request.messages, &request.tools)
            .map_err(LocalError::Template)
    }

    /// Tokens this model has generated since it was loaded, for every
    /// request (a dropped stream's stop shows here).
    pub fn generated_tokens(&self) -> u64 {
        self.worker.generated()
    }

    /// The path of the model file.
    pub fn path(&self) -> &Path {
        self.worker.path()
    }
}

impl Provider for LocalProvider {
    fn info(&self) -> &ProviderInfo {
        &self.info
    }

    fn stream(&self, request: &ProviderRequest<'_>) -> EventStream {
        let prompt = match self.prompt_for(request) {
            Ok(prompt) => prompt,
            Err(error) => {
                let message = error.to_string();
                return futures_util::stream::once(async move { Err(LlmError::Config(message)) })
                    .boxed();
            }
        };
        // In the text protocol the tools are only described in `system`;
        // the grammar still holds a started call to them.
        let tools = match (self.grammar && !request.answer_only, request.tools.is_empty()) {
            (false, _) => Vec::new(),
            (true, true) => request.text_tools.to_vec(),
            (true, false) => request.tools.to_vec(),
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let (events, receiver) = tokio::sync::mpsc::unbounded_channel();
        let job = Job {
            prompt,
            tools,
            syntax: self.syntax,
            max_tokens: request.max_output_tokens.or(self.max_tokens),
            temperature: request.temperature.or(self.temperature),
            cancel: Arc::clone(&cancel),
            events,
        };
        if let Err(message) = self.worker.submit(job) {
            return futures_util::stream::once(async move {
                Err(LlmError::Stream { provider: PROVIDER.into(), message })
            })
            .boxed();
        }
        let guard = CancelOnDrop(cancel);
        let stream =
            futures_util::stream::unfold((receiver, guard), |(mut receiver, guard)| async move {
                let item = receiver.recv().await?;
                Some((item, (receiver, guard)))
            })
            .boxed();
        match self.syntax {
            CallSyntax::Model(_) if !request.tools.is_empty() => {
                with_text_calls(stream, request.tools.iter().map(|t| t.name.clone()).collect())
            }
            _ => stream,
        }
    }
}

/// Stops the generation when the stream is dropped.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}
