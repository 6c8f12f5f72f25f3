//! Token counts for the context window: a cheap estimate while the
//! conversation is small, the real tokenizer once it nears the window.
//!
//! A vocabulary costs 50–120 ms to build and tens of megabytes to hold, so a
//! counter starts out estimating ([`estimate`], one pass over the bytes, no
//! allocation) and never loads one until [`TokenCounter::load`] is called;
//! the history calls it when the conversation passes
//! [`crate::context::EXACT_AT`] of the window, before any trimming can be
//! decided. Loaded, OpenAI-family models are counted with their own encoding
//! (o200k), every other model with cl100k as an estimate.
//!
//! Either way the count is corrected by what the provider reports:
//! [`TokenCounter::observe`] keeps the ratio of reported prompt tokens to
//! the count for the same request, and [`TokenCounter::carry_correction`]
//! keeps that ratio meaning the same when the counter switches to the
//! tokenizer.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use axon_protocol::{ContentPart, Message, ToolSpec};
use tiktoken_rs::CoreBPE;

use crate::vocab::Vocabulary;

/// Tokens every message costs beyond its text (role, separators).
const PER_MESSAGE: u64 = 4;
/// What an image or audio part is counted as: providers bill them by size,
/// which text tokenizers cannot see.
const PER_MEDIA: u64 = 800;
/// The bounds of the correction, in thousandths: one odd report (or a
/// provider that reports nonsense) cannot swing the count far.
const SCALE_MIN: u64 = 500;
const SCALE_MAX: u64 = 3000;

pub struct TokenCounter {
    openai: bool,
    /// Empty until [`TokenCounter::load`]: counts are estimates till then.
    bpe: OnceLock<&'static CoreBPE>,
    /// Reported / counted, in thousandths (1000 = the count is right).
    scale_milli: AtomicU64,
    /// Whether any report has been taken into the correction; until one
    /// has, the correction says nothing and is not carried over.
    reported: AtomicBool,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCounter")
            .field("loaded", &self.is_loaded())
            .field("scale", &self.scale())
            .finish()
    }
}

impl TokenCounter {
    /// The counter for `model`, estimating until [`TokenCounter::load`].
    pub fn for_model(model: &str) -> Self {
        TokenCounter {
            openai: is_openai_family(model),
            bpe: OnceLock::new(),
            scale_milli: AtomicU64::new(1000),
            reported: AtomicBool::new(false),
        }
    }

    /// Counts with the model family's tokenizer from now on, building its
    /// vocabulary if no counter in this process has yet (one encoder per
    /// vocabulary per process; if its packed file does not unpack, counts
    /// stay estimates). Counts made before are estimates: whoever keeps them
    /// counts again (the history does, in `count_exactly_past`).
    pub fn load(&self) {
        if self.bpe.get().is_none()
            && let Some(bpe) = vocabulary(self.openai).shared()
        {
            let _ = self.bpe.set(bpe);
        }
    }

    /// Whether this counter counts with the tokenizer (it has been loaded).
    pub fn is_loaded(&self) -> bool {
        self.bpe.get().is_some()
    }

    /// `text`'s tokens: exact once loaded, estimated before.
    pub fn text(&self, text: &str) -> u64 {
        match self.bpe.get() {
            Some(bpe) => bpe.encode_ordinary(text).len() as u64,
            None => estimate(text),
        }
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
        let observed = (reported * 1000 / estimated).clamp(SCALE_MIN, SCALE_MAX);
        let old = self.scale_milli.load(Ordering::Relaxed);
        self.scale_milli.store((old + observed) / 2, Ordering::Relaxed);
        self.reported.store(true, Ordering::Relaxed);
    }

    /// The same content was counted `before` (estimated) and is `after`
    /// now (with the tokenizer): the correction learned from reports is
    /// re-expressed for the new count, so the corrected total stays what
    /// the provider taught it rather than jumping with the change of
    /// counting. Without any report there is nothing learned to carry, and
    /// the tokenizer's count is trusted over the estimate.
    pub fn carry_correction(&self, before: u64, after: u64) {
        if !self.reported.load(Ordering::Relaxed) || before == 0 || after == 0 {
            return;
        }
        let old = self.scale_milli.load(Ordering::Relaxed);
        let carried = u64::try_from(u128::from(old) * u128::from(before) / u128::from(after))
            .unwrap_or(SCALE_MAX);
        self.scale_milli.store(carried.clamp(SCALE_MIN, SCALE_MAX), Ordering::Relaxed);
    }

    /// The correction factor learned so far.
    pub fn scale(&self) -> f64 {
        self.scale_milli.load(Ordering::Relaxed) as f64 / 1000.0
    }

    /// `raw` counted tokens, corrected.
    pub fn corrected(&self, raw: u64) -> u64 {
        raw.saturating_mul(self.scale_milli.load(Ordering::Relaxed)) / 1000
    }
}

/// A tokenizer-free estimate of `text`'s tokens, in one pass over its bytes.
///
/// Plain bytes/4 is right for English prose but counts JSON with numbers,
/// hex and base64 (tool results, lock files) at a third to a half of what
/// cl100k and o200k do, and an estimate that low would let a conversation
/// reach the trim threshold before the tokenizer is loaded. Following the
/// tokenizers' own pre-split into runs of letters, digits, punctuation and
/// space keeps it within 0.79–1.45× of both on code, prose, JSON, YAML,
/// hex, base64, Chinese, Japanese and emoji (over, 2.4×, only on Cyrillic,
/// where an over-count merely loads the tokenizer sooner):
/// - letters: one token per 6, or one per change of case plus one when
///   that is more (random base64 splits at nearly every change);
/// - digits: one per 3 (both encodings split numbers into 1–3 digits);
/// - punctuation: one per 2 (`{"`, `":`, `();` are single tokens);
/// - a single space joins the next word; longer runs of blanks and line
///   breaks cost one;
/// - every other character: one, or two for the four-byte ones (emoji).
pub(crate) fn estimate(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let mut total = 0u64;
    let mut i = 0;
    while i < bytes.len() {
        let kind = Kind::of(bytes[i]);
        let start = i;
        while i < bytes.len() && Kind::of(bytes[i]) == kind {
            i += 1;
        }
        let run = &bytes[start..i];
        let len = run.len() as u64;
        total += match kind {
            Kind::Letter => {
                let changes = run
                    .windows(2)
                    .filter(|pair| pair[0].is_ascii_lowercase() != pair[1].is_ascii_lowercase())
                    .count() as u64;
                len.div_ceil(6).max(changes + 1)
            }
            Kind::Digit => len.div_ceil(3),
            Kind::Punct => len.div_ceil(2),
            Kind::Blank => u64::from(len > 1),
            Kind::Break => 1,
            // Lead bytes start characters; continuation bytes (0x80–0xBF)
            // add nothing.
            Kind::Other => run
                .iter()
                .map(|&b| match b {
                    0xF0.. => 2,
                    0xC0.. => 1,
                    _ => 0,
                })
                .sum(),
        };
    }
    total
}

/// What the tokenizers' pre-split sees a byte as.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Letter,
    Digit,
    Blank,
    Break,
    Punct,
    Other,
}

impl Kind {
    fn of(byte: u8) -> Kind {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' => Kind::Letter,
            b'0'..=b'9' => Kind::Digit,
            b' ' | b'\t' => Kind::Blank,
            b'\n' | b'\r' => Kind::Break,
            0x80.. => Kind::Other,
            _ => Kind::Punct,
        }
    }
}

/// The model family's vocabulary.
fn vocabulary(openai: bool) -> Vocabulary {
    if openai { Vocabulary::O200k } else { Vocabulary::Cl100k }
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
        counter.load();
        assert_eq!(counter.text("hello world"), 2);
        assert!(counter.message(&Message::user("hello world")) >= 6);
    }

    #[test]
    fn a_counter_estimates_until_loaded() {
        let counter = TokenCounter::for_model("deepseek-chat");
        let text = "fn main() { println!(\"hello, world\"); }";
        assert!(!counter.is_loaded());
        assert_eq!(counter.text(text), estimate(text));
        assert!(!counter.is_loaded(), "counting does not load the tokenizer");
        counter.load();
        assert!(counter.is_loaded());
        assert_eq!(
            counter.text(text),
            tiktoken_rs::cl100k_base_singleton().encode_ordinary(text).len() as u64
        );
    }

    /// Texts an agent's context holds, and ones that tokenize badly.
    fn samples() -> Vec<(&'static str, String)> {
        // A deterministic stand-in for random bytes (base64 of a hash chain).
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut noise = Vec::new();
        for _ in 0..3000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            noise.extend_from_slice(&state.to_le_bytes());
        }
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let base64: String = noise.iter().map(|b| alphabet[usize::from(b % 64)] as char).collect();
        let hex: String = noise.iter().map(|b| format!("{b:02x}")).collect();
        let numbers: Vec<serde_json::Value> = noise
            .chunks(8)
            .take(500)
            .enumerate()
            .map(|(i, c)| serde_json::json!({"id": c[0] as u64 * 7919 + c[1] as u64, "x": f64::from(c[2]) / 7.0, "name": format!("item{i}")}))
            .collect();
        vec![
            ("rust", include_str!("context.rs").to_string()),
            ("this file", include_str!("tokens.rs").to_string()),
            (
                "prose",
                "Work step by step: look before you change, make the smallest change \
                that does the job, and check your work. When a tool fails, read its message \
                and adjust rather than repeating the same call.\n\n"
                    .repeat(40),
            ),
            ("json", serde_json::to_string(&numbers).unwrap_or_default()),
            ("pretty json", serde_json::to_string_pretty(&numbers).unwrap_or_default()),
            ("base64", base64),
            ("hex", hex),
            (
                "chinese",
                "会话文件记录每一条消息，以便恢复。人工智能代理读取文件并运行命令。".repeat(50),
            ),
            ("emoji", "🙂🚀✅ done! 🎉🔥 ".repeat(200)),
        ]
    }

    /// The estimate may be high (the tokenizer is then loaded sooner) but
    /// never less than 60 % of the real count: switching at half the trim
    /// threshold relies on it being off by less than 2× downwards.
    #[test]
    fn the_estimate_stays_near_both_encodings() {
        for (name, text) in samples() {
            let guess = estimate(&text);
            for (encoding, bpe) in [
                ("cl100k", tiktoken_rs::cl100k_base_singleton()),
                ("o200k", tiktoken_rs::o200k_base_singleton()),
            ] {
                let real = bpe.encode_ordinary(&text).len() as u64;
                assert!(
                    guess * 10 >= real * 6,
                    "{name}/{encoding}: estimated {guess}, really {real}"
                );
                assert!(guess <= real * 3, "{name}/{encoding}: estimated {guess}, really {real}");
            }
        }
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

    #[test]
    fn switching_to_the_tokenizer_keeps_what_reports_taught() {
        let counter = TokenCounter::for_model("deepseek-chat");
        counter.carry_correction(1200, 1000);
        assert_eq!(counter.scale(), 1.0, "nothing learned, nothing carried");
        counter.observe(1000, 1000);
        // What was estimated at 1000 is 800 by the tokenizer: the
        // provider's 1000 still come out of the new count.
        counter.carry_correction(1000, 800);
        assert_eq!(counter.corrected(800), 1000);
        counter.carry_correction(1000, 1);
        assert!(counter.scale() <= 3.0);
    }
}
