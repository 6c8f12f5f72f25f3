//! Token counts for the context window, from a real tokenizer.
//!
//! OpenAI-family models are counted with their own encoding (o200k); every
//! other model with cl100k as an estimate. The estimate is then corrected
//! by what the provider reports: [`TokenCounter::observe`] keeps the ratio
//! of reported prompt tokens to the estimate for the same request.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use axon_protocol::{ContentPart, Message, ToolSpec};
use tiktoken_rs::CoreBPE;

/// Tokens every message costs beyond its text (role, separators).
const PER_MESSAGE: u64 = 4;
/// What an image or audio part is counted as: providers bill them by size,
/// which text tokenizers cannot see.
const PER_MEDIA: u64 = 800;

pub struct TokenCounter {
    openai: bool,
    /// Loaded on first use: building a vocabulary takes 50–120 ms, which a
    /// resumed session with recorded counts never needs to pay up front.
    bpe: OnceLock<&'static CoreBPE>,
    /// Reported / estimated, in thousandths (1000 = the estimate is right).
    scale_milli: AtomicU64,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCounter").field("scale", &self.scale()).finish()
    }
}

impl TokenCounter {
    /// The counter for `model`.
    pub fn for_model(model: &str) -> Self {
        TokenCounter {
            openai: is_openai_family(model),
            bpe: OnceLock::new(),
            scale_milli: AtomicU64::new(1000),
        }
    }

    fn bpe(&self) -> &'static CoreBPE {
        let openai = self.openai;
        self.bpe.get_or_init(|| load(openai))
    }

    /// Loads the vocabulary on a background thread, so it is ready by the
    /// time the first message needs counting.
    pub fn warm_up(&self) {
        let openai = self.openai;
        let _ = std::thread::Builder::new().name("axon-tokenizer".into()).spawn(move || {
            load(openai);
        });
    }

    pub fn text(&self, text: &str) -> u64 {
        self.bpe().encode_ordinary(text).len() as u64
    }

    /// One message's tokens as the model will see it (uncorrected).
    pub fn message(&self, message: &Message) -> u64 {
        let mut total = PER_MESSAGE;
        for part in &message.content {
            total += match part {
                ContentPart::Text { text } | ContentPart::Thinking { text, .. } => self.text(text),
                ContentPart::Image { .. } | ContentPart::Audio { .. } => PER_MEDIA,
            };
        }
        for call in &message.tool_calls {
            total += PER_MESSAGE + self.text(&call.name) + self.text(&call.arguments.to_string());
        }
        total
    }

    /// The fixed part of every request: system prompt and tool definitions.
    pub fn preamble(&self, system: &str, tools: &[ToolSpec]) -> u64 {
        let mut total = PER_MESSAGE + self.text(system);
        for tool in tools {
            total += PER_MESSAGE
                + self.text(&tool.name)
                + self.text(&tool.description)
                + self.text(&tool.input_schema.to_string());
        }
        total
    }

    /// Learns from a provider's report: `estimated` tokens were sent and
    /// the provider counted `reported`. The correction is smoothed and
    /// kept within 0.5–3×, so one odd report cannot swing it far.
    pub fn observe(&self, estimated: u64, reported: u64) {
        if estimated < 64 || reported == 0 {
            return;
        }
        let observed = (reported * 1000 / estimated).clamp(500, 3000);
        let old = self.scale_milli.load(Ordering::Relaxed);
        self.scale_milli.store((old + observed) / 2, Ordering::Relaxed);
    }

    /// The correction factor learned so far.
    pub fn scale(&self) -> f64 {
        self.scale_milli.load(Ordering::Relaxed) as f64 / 1000.0
    }

    /// `raw` estimated tokens, corrected.
    pub fn corrected(&self, raw: u64) -> u64 {
        raw.saturating_mul(self.scale_milli.load(Ordering::Relaxed)) / 1000
    }
}

/// The process-wide vocabulary (tiktoken keeps one of each).
fn load(openai: bool) -> &'static CoreBPE {
    if openai { tiktoken_rs::o200k_base_singleton() } else { tiktoken_rs::cl100k_base_singleton() }
}

/// Models that use OpenAI's o200k encoding.
fn is_openai_family(model: &str) -> bool {
    let model = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    ["gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt", "gpt-oss"]
        .iter()
        .any(|prefix| model.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_models_get_their_own_encoding() {
        assert!(is_openai_family("gpt-4o-mini") && is_openai_family("openai/o3-mini"));
        assert!(!is_openai_family("deepseek-chat") && !is_openai_family("claude-sonnet-4"));
        let counter = TokenCounter::for_model("gpt-4o");
        assert_eq!(counter.text("hello world"), 2);
        assert!(counter.message(&Message::user("hello world")) >= 6);
    }

    #[test]
    fn reports_correct_the_estimate_within_bounds() {
        let counter = TokenCounter::for_model("deepseek-chat");
        assert_eq!(counter.corrected(1000), 1000);
        counter.observe(1000, 1200);
        assert_eq!(counter.corrected(1000), 1100);
        for _ in 0..20 {
            counter.observe(1000, 100_000);
        }
        assert!(counter.scale() <= 3.0);
        counter.observe(10, 5000);
        assert!(counter.scale() <= 3.0);
    }
}
