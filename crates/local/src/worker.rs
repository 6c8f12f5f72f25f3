//! The thread that owns a loaded model's context and generates.
//!
//! llama.cpp's context is not shared between threads, and one model on a
//! CPU gains nothing from running two answers at once, so one thread takes
//! jobs in order. It keeps the tokens now in the KV cache and evaluates
//! only the part of the next prompt that differs. Cancellation is a flag
//! read before every token; a consumer that went away counts as one.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, mpsc};

use axon_llm::{FinishReason, LlmError, ProviderEvent};
use axon_protocol::{ToolSpec, Usage};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::mpsc::UnboundedSender;

use crate::grammar::{self, CallSyntax};
use crate::{DEFAULT_MAX_WINDOW, LocalConfig, LocalError, PROVIDER};

/// The temperature when neither the request nor the config sets one: low,
/// since small models wander at higher ones, but not greedy, which makes
/// them repeat themselves.
const DEFAULT_TEMPERATURE: f32 = 0.2;

/// One answer to generate.
pub(crate) struct Job {
    pub prompt: String,
    pub tools: Vec<ToolSpec>,
    pub syntax: CallSyntax,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    pub cancel: Arc<AtomicBool>,
    pub events: UnboundedSender<Result<ProviderEvent, LlmError>>,
}

/// The handle jobs are sent through.
pub(crate) struct Worker {
    jobs: mpsc::Sender<Job>,
    path: PathBuf,
    generated: Arc<AtomicU64>,
}

impl Worker {
    pub fn submit(&self, job: Job) -> Result<(), String> {
        self.jobs
            .send(job)
            .map_err(|_| format!("the model {} stopped; start axon again", self.path.display()))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn generated(&self) -> u64 {
        self.generated.load(Ordering::SeqCst)
    }
}

/// A started worker and what the provider needs from the model.
pub(crate) struct Loaded {
    pub worker: Worker,
    pub chat_template: Option<String>,
    pub bos: String,
    pub eos: String,
    pub window: u32,
}

/// llama.cpp's process-wide state, set up once; its logging is turned off
/// first so that nothing reaches the terminal.
fn backend() -> Result<&'static LlamaBackend, LocalError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(
                llama_cpp_2::LogOptions::default().with_logs_enabled(false),
            );
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LocalError::Thread(format!("llama.cpp did not start: {e}")))
}

/// Loads the model, makes its context on the worker thread and returns once
/// both exist (or why not).
pub(crate) fn start(config: &LocalConfig) -> Result<Loaded, LocalError> {
    let path = config.model_path.clone();
    let shown = path.display().to_string();
    let load_error = |detail: String, arch: &str| LocalError::Load {
        path: shown.clone(),
        arch: if arch.is_empty() { String::new() } else { format!(" ({arch})") },
        detail,
    };
    if let Err(e) = std::fs::File::open(&path) {
        return Err(LocalError::Missing { path: shown, detail: e.to_string() });
    }
    if config.context_window == Some(0) {
        return Err(LocalError::Window { path: shown });
    }
    let missing = crate::cpu::missing();
    if !missing.is_empty() {
        return Err(LocalError::Cpu {
            variant: crate::cpu::variant().into(),
            missing: missing.join(", ").to_uppercase(),
        });
    }
    let backend = backend()?;
    // After the backend, whose set-up turns llama.cpp's logging off first.
    #[cfg(feature = "cpu-variants")]
    crate::variants::load()?;
    let params = LlamaModelParams::default().with_n_gpu_layers(config.gpu_layers);
    let model = LlamaModel::load_from_file(backend, &path, &params)
        .map_err(|e| load_error(e.to_string(), &architecture_of(&path)))?;
    let vocab = model.vocab();
    let (bos, eos) = (special_text(&model, vocab.bos()), special_text(&model, vocab.eos()));
    let chat_template = model.meta_val_str("tokenizer.chat_template").ok();
    // The default never exceeds what the model was trained on; an explicit
    // window is the user's call, as with llama.cpp's own -c.
    let trained = model.n_ctx_train().max(1);
    let window = config.context_window.unwrap_or(DEFAULT_MAX_WINDOW.min(trained));
    let threads = config
        .threads
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1);
    let threads = i32::try_from(threads).unwrap_or(i32::MAX).max(1);

    let (jobs, inbox) = mpsc::channel::<Job>();
    let (ready, started) = mpsc::channel::<Result<(), LocalError>>();
    let model = Arc::new(model);
    let seed = config.seed;
    let generated = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&generated);
    let thread_bos = bos.clone();
    let context_error = LocalError::Context { path: shown.clone(), window };
    let thread_path = path.clone();
    std::thread::Builder::new()
        .name("axon-local-model".into())
        .spawn(move || {
            let params = LlamaContextParams::default()
                .with_n_ctx(NonZeroU32::new(window))
                .with_n_threads(threads)
                .with_n_threads_batch(threads);
            let mut context = match model.new_context(backend, params) {
                Ok(context) => context,
                Err(_) => {
                    let _ = ready.send(Err(context_error));
                    return;
                }
            };
            let _ = ready.send(Ok(()));
            let mut state =
                State { cached: Vec::new(), path: thread_path, seed, bos: thread_bos, counter };
            for job in inbox {
                state.run(&model, &mut context, job);
            }
        })
        .map_err(|e| LocalError::Thread(e.to_string()))?;
    started
        .recv()
        .map_err(|_| LocalError::Thread("it ended before making its context".into()))??;
    Ok(Loaded { worker: Worker { jobs, path, generated }, chat_template, bos, eos, window })
}

/// The architecture a GGUF file names, for messages; empty when unreadable.
fn architecture_of(path: &Path) -> String {
    // The key's string is in the header's first kilobytes.
    let mut head = vec![0u8; 64 * 1024];
    let read = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    let head = &head[..read];
    let key = b"general.architecture";
    let Some(at) = head.windows(key.len()).position(|w| w == key) else {
        return String::new();
    };
    // key, then u32 type (8 = string), u64 length, bytes.
    let rest = &head[at + key.len()..];
    let Some(len) = rest.get(4..12).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes) else {
        return String::new();
    };
    let len = usize::try_from(len.min(64)).unwrap_or(0);
    rest.get(12..12 + len).map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default()
}

/// What the worker keeps between jobs.
struct State {
    /// The tokens whose keys and values are in the cache, in order.
    cached: Vec<LlamaToken>,
    path: PathBuf,
    seed: u32,
    /// The BOS token's text ("" when the model has none).
    bos: String,
    /// Tokens generated, across jobs.
    counter: Arc<AtomicU64>,
}

/// Prompt tokens evaluated per step: llama.cpp's own micro-batch, so a
/// cancelled prompt stops within one step at no cost in speed.
const PROMPT_STEP: usize = 512;

impl State {
    fn run(&mut self, model: &LlamaModel, context: &mut LlamaContext<'_>, job: Job) {
        // A request dropped while it waited in the queue costs nothing.
        if cancelled(&job) {
            return;
        }
        let events = job.events.clone();
        if let Err(error) = self.generate(model, context, &job) {
            if !matches!(error, LlmError::ContextLength { .. }) {
                // A failed decode may leave the cache unlike `cached`.
                context.clear_kv_cache();
                self.cached.clear();
            }
            let _ = events.send(Err(error));
        }
    }

    fn generate(
        &mut self,
        model: &LlamaModel,
        context: &mut LlamaContext<'_>,
        job: &Job,
    ) -> Result<(), LlmError> {
        let failed = |message: String| LlmError::Stream { provider: PROVIDER.into(), message };
        let vocab = model.vocab();
        let add_bos =
            vocab.should_add_bos() && (self.bos.is_empty() || !job.prompt.starts_with(&self.bos));
        let tokens = vocab.tokenize(job.prompt.as_bytes(), add_bos, true);
        let window = usize::try_from(context.n_ctx()).unwrap_or(usize::MAX);
        if tokens.is_empty() {
            return Err(failed("the chat template produced an empty prompt".into()));
        }
        if tokens.len() >= window {
            return Err(LlmError::ContextLength {
                message: format!("the prompt is {} tokens and the window {window}", tokens.len()),
                url: self.path.display().to_string(),
            });
        }
        let room = window - tokens.len();
        let budget =
            job.max_tokens.and_then(|n| usize::try_from(n).ok()).map_or(room, |n| n.min(room));

        // Reuse the cached prefix; at least the last token is evaluated,
        // for its logits.
        let mut common = self.cached.iter().zip(&tokens).take_while(|(a, b)| a == b).count();
        common = common.min(tokens.len() - 1);
        let trimmed = u32::try_from(common)
            .ok()
            .and_then(|p0| context.clear_kv_cache_seq(Some(0), Some(p0), None).ok())
            .unwrap_or(false);
        if !trimmed {
            context.clear_kv_cache();
            common = 0;
        }
        self.cached.truncate(common);

        let n_batch =
            usize::try_from(context.n_batch()).unwrap_or(PROMPT_STEP).clamp(1, PROMPT_STEP);
        let mut batch = LlamaBatch::new(n_batch, 1);
        let last = tokens.len() - 1;
        for (chunk_index, chunk) in tokens[common..].chunks(n_batch).enumerate() {
            // `cached` matches the cache after every step: what was
            // evaluated stays usable for the next request.
            if cancelled(job) {
                return Ok(());
            }
            batch.clear();
            for (offset, token) in chunk.iter().enumerate() {
                let at = common + chunk_index * n_batch + offset;
                batch
                    .add(*token, position(at)?, &[0], at == last)
                    .map_err(|e| failed(e.to_string()))?;
            }
            context
                .decode(&mut batch)
                .map_err(|e| failed(format!("evaluating the prompt: {e}")))?;
            self.cached.extend_from_slice(chunk);
        }

        let mut sampler = self.sampler(model, job, true);
        let mut logits_at = batch.n_tokens() - 1;
        let mut pending: Vec<u8> = Vec::new();
        let mut generated = 0usize;
        let reason = loop {
            if cancelled(job) {
                return Ok(());
            }
            let token = match sample(&mut sampler, context, logits_at) {
                Some(token) => token,
                None => {
                    // The grammar refused what the model wrote around its
                    // trigger: go on unconstrained (the parser still checks
                    // the call) rather than fail the answer.
                    sampler = self.sampler(model, job, false);
                    match sample(&mut sampler, context, logits_at) {
                        Some(token) => token,
                        None => return Err(failed("the sampler chose no token".into())),
                    }
                }
            };
            if vocab.is_eog(token) {
                break FinishReason::Stop;
            }
            pending.extend_from_slice(&vocab.token_to_piece(token, true, None));
            let text = take_utf8(&mut pending);
            if !text.is_empty() && job.events.send(Ok(ProviderEvent::TextDelta(text))).is_err() {
                return Ok(());
            }
            generated += 1;
            self.counter.fetch_add(1, Ordering::SeqCst);
            if generated >= budget {
                break FinishReason::Length;
            }
            batch.clear();
            let at = self.cached.len();
            batch.add(token, position(at)?, &[0], true).map_err(|e| failed(e.to_string()))?;
            context.decode(&mut batch).map_err(|e| failed(format!("generating: {e}")))?;
            self.cached.push(token);
            logits_at = 0;
        };
        if !pending.is_empty() {
            let rest = String::from_utf8_lossy(&pending).into_owned();
            let _ = job.events.send(Ok(ProviderEvent::TextDelta(rest)));
        }
        let usage = Usage {
            input_tokens: tokens.len() as u64,
            output_tokens: generated as u64,
            cached_input_tokens: common as u64,
            reasoning_tokens: 0,
        };
        let _ = job.events.send(Ok(ProviderEvent::Usage(usage)));
        let _ = job.events.send(Ok(ProviderEvent::Finish(reason)));
        Ok(())
    }

    /// The grammar (when there are tools), then the usual truncations and
    /// a seeded draw; greedy at temperature 0.
    fn sampler(&self, model: &LlamaModel, job: &Job, constrained: bool) -> LlamaSampler {
        let mut chain = Vec::new();
        let grammar = constrained
            .then(|| {
                grammar::for_tools(job.syntax, &job.tools, |schema| {
                    llama_cpp_2::json_schema_to_grammar(schema).ok()
                })
            })
            .flatten();
        if let Some(grammar) = grammar {
            // A trigger that is one special token (Qwen's <tool_call>) is
            // also matched as that token.
            let vocab = model.vocab();
            let as_tokens = vocab.tokenize(grammar.trigger.as_bytes(), false, true);
            let trigger_tokens: &[LlamaToken] =
                if as_tokens.len() == 1 && vocab.is_control(as_tokens[0]) {
                    &as_tokens
                } else {
                    &[]
                };
            // A grammar llama.cpp refuses leaves the answer unconstrained
            // rather than failing it; the parser still checks the call.
            if let Ok(sampler) = LlamaSampler::grammar_lazy(
                model,
                &grammar.gbnf,
                "root",
                [grammar.trigger.as_bytes()],
                trigger_tokens,
            ) {
                chain.push(sampler);
            }
        }
        let temperature = job.temperature.unwrap_or(DEFAULT_TEMPERATURE);
        if temperature <= 0.0 {
            chain.push(LlamaSampler::greedy());
        } else {
            chain.extend([
                LlamaSampler::top_k(40),
                LlamaSampler::top_p(0.95, 1),
                LlamaSampler::min_p(0.05, 1),
                LlamaSampler::temp(temperature),
                LlamaSampler::dist(self.seed),
            ]);
        }
        LlamaSampler::chain_simple(chain)
    }
}

/// The next token: the chain applied to the logits at `at`, then the
/// choice accepted. `None` when a sampler (the grammar) refused it, where
/// llama.cpp's own sample call would abort the process instead.
fn sample(sampler: &mut LlamaSampler, context: &LlamaContext<'_>, at: i32) -> Option<LlamaToken> {
    let mut candidates = context.token_data_array_ith(at);
    sampler.apply(&mut candidates);
    let token = candidates.selected_token()?;
    sampler.try_accept(token).ok()?;
    Some(token)
}

/// A special token's text; "" for a token the model does not have (-1).
fn special_text(model: &LlamaModel, token: LlamaToken) -> String {
    if token.0 < 0 {
        return String::new();
    }
    String::from_utf8_lossy(&model.vocab().token_to_piece(token, true, None)).into_owned()
}

fn cancelled(job: &Job) -> bool {
    job.cancel.load(Ordering::SeqCst) || job.events.is_closed()
}

fn position(at: usize) -> Result<i32, LlmError> {
    i32::try_from(at).map_err(|_| LlmError::Stream {
        provider: PROVIDER.into(),
        message: "position beyond llama.cpp's range".into(),
    })
}

/// The text of `pending` that is complete UTF-8, removed from it: bytes
/// that can never be UTF-8 become U+FFFD, and a character split across
/// tokens waits for its other bytes.
fn take_utf8(pending: &mut Vec<u8>) -> String {
    let mut text = String::new();
    let mut rest: &[u8] = pending;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                text.push_str(valid);
                rest = &[];
                break;
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                text.push_str(std::str::from_utf8(valid).unwrap_or_default());
                match e.error_len() {
                    Some(bad) => {
                        text.push('\u{fffd}');
                        rest = after.get(bad..).unwrap_or_default();
                    }
                    None => {
                        rest = after;
                        break;
                    }
                }
            }
        }
    }
    *pending = rest.to_vec();
    text
}

#[cfg(test)]
mod tests {
    use super::take_utf8;

    #[test]
    fn a_character_split_across_tokens_waits_for_its_bytes() {
        let mut pending = "é".as_bytes()[..1].to_vec();
        assert_eq!(take_utf8(&mut pending), "");
        pending.extend_from_slice(&"é".as_bytes()[1..]);
        pending.extend_from_slice(b"x");
        assert_eq!(take_utf8(&mut pending), "éx");
        assert!(pending.is_empty());
        let mut bad = vec![b'a', 0xff, b'b'];
        assert_eq!(take_utf8(&mut bad), "a\u{fffd}b");
        // A bad byte before a split character keeps the character waiting.
        let mut mixed = vec![0xff, b'x', 0xc3];
        assert_eq!(take_utf8(&mut mixed), "\u{fffd}x");
        assert_eq!(mixed, vec![0xc3]);
    }
}
