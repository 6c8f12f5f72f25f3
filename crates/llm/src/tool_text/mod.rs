//! Tool calls that small and local models write as text, turned into real
//! calls.
//!
//! Models served by Ollama, llama.cpp's server, vLLM and the like often
//! leak their native call syntax into the reply's text instead of the
//! API's `tool_calls`; axon's in-process llama.cpp provider sees nothing
//! but that text. These formats are read, whichever appears:
//!
//! - Hermes, Qwen 2.5 and Qwen3: `<tool_call>{"name": …, "arguments": …}</tool_call>`
//!   (`arguments` may be an object or a JSON string holding one), and
//!   Qwen3-Coder's `<tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call>`;
//! - Llama 3.x: `<|python_tag|>{"name": …, "parameters": …}`,
//!   `<function=NAME>{…}</function>`, and a reply that is nothing but call
//!   objects (separated by `;` or newlines), counted only when every name
//!   is one of the request's tools, so ordinary JSON answers stay text;
//! - Mistral: `[TOOL_CALLS][{"name": …, "arguments": …}, …]` and
//!   `[TOOL_CALLS]NAME[CALL_ID]id[ARGS]{…}` (the id optional).
//!
//! What this module guarantees: nothing is lost (a block that does not
//! read as a call is given back as text, marker included); a reply gives
//! the same prose and calls however it is split into deltas
//! ([`CallExtractor`] against [`extract_calls`]); and the work is linear in
//! the reply, however small its deltas.

mod blocks;
mod extract;
mod json;
mod stream;

use serde_json::Value;

use crate::scan_cost::ScanCost;

pub use extract::CallExtractor;
pub use stream::with_text_calls;

/// The syntax a model's chat template writes tool calls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFormat {
    /// `<tool_call>…</tool_call>` (Hermes, Qwen 2.5, Qwen3, Qwen3-Coder).
    Hermes,
    /// `<|python_tag|>{…}` or bare JSON objects (Llama 3.1, 3.2, 3.3).
    Llama3,
    /// `[TOOL_CALLS]…` (Mistral, Mixtral, Devstral, Magistral).
    Mistral,
}

impl CallFormat {
    /// The format a Jinja chat template writes calls in, if it has one: the
    /// template names its call marker (`<tool_call>`, `[TOOL_CALLS]`,
    /// `<|python_tag|>`), or is a Llama 3 template (its header tokens) that
    /// reads a `tools` variable. `None` for templates without tool calls.
    pub fn detect(chat_template: &str) -> Option<CallFormat> {
        if chat_template.contains("<tool_call>") {
            return Some(CallFormat::Hermes);
        }
        if chat_template.contains("[TOOL_CALLS]") {
            return Some(CallFormat::Mistral);
        }
        let llama_headers = chat_template.contains("<|start_header_id|>");
        if chat_template.contains("<|python_tag|>")
            || (llama_headers && mentions_tools(chat_template))
        {
            return Some(CallFormat::Llama3);
        }
        None
    }

    /// The literal text a call in this format starts with, for grammars
    /// that wait for it before constraining the output. Llama 3 models also
    /// write calls as bare JSON objects with no marker at all: those have
    /// no literal trigger, and `<|python_tag|>` covers only the tagged form.
    pub fn trigger(&self) -> &'static str {
        match self {
            CallFormat::Hermes => "<tool_call>",
            CallFormat::Llama3 => "<|python_tag|>",
            CallFormat::Mistral => "[TOOL_CALLS]",
        }
    }
}

/// Whether a template reads a `tools` variable (`{% if tools %}`,
/// `tools is not none`, `for tool in tools`…), not merely the word.
fn mentions_tools(template: &str) -> bool {
    template.match_indices("tools").any(|(at, _)| {
        let before = template[..at].chars().next_back();
        let after = template[at + "tools".len()..].chars().next();
        let word_edge = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        word_edge(before) && word_edge(after) && {
            // Inside a `{% … %}` or `{{ … }}` tag: the last opener before it
            // is not yet closed.
            let head = &template[..at];
            let open = head.rfind("{%").max(head.rfind("{{"));
            let close = head.rfind("%}").max(head.rfind("}}"));
            match (open, close) {
                (Some(open), Some(close)) => open > close,
                (Some(_), None) => true,
                _ => false,
            }
        }
    })
}

/// One piece of a reply, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Prose, exactly as written.
    Text(String),
    /// A call; `arguments` is always a JSON object.
    Call { name: String, arguments: Value },
}

/// Splits a whole reply into its prose (everything outside the calls,
/// exactly as written, untrimmed) and its calls, in order. The same as
/// feeding the reply to a [`CallExtractor`] in any number of deltas.
pub fn extract_calls(reply: &str, tool_names: &[String]) -> (String, Vec<(String, Value)>) {
    let mut extractor = CallExtractor::new(tool_names.to_vec());
    let mut pieces = extractor.push(reply);
    pieces.extend(extractor.finish());
    join(pieces)
}

/// Pieces as (prose, calls).
fn join(pieces: Vec<Piece>) -> (String, Vec<(String, Value)>) {
    let mut text = String::new();
    let mut calls = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Text(t) => text.push_str(&t),
            Piece::Call { name, arguments } => calls.push((name, arguments)),
        }
    }
    (text, calls)
}

#[cfg(test)]
mod tests;
