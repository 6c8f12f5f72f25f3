//! Reading call JSON as it streams in: where a value starting with `{`
//! or `[` ends, found by one pass over its bytes and read by serde once;
//! which call objects a value spells; and runs of call values. Every
//! answer, once given, holds for any longer text that starts the same.

use serde_json::{Map, Value};

use super::ScanCost;
use crate::json_end::ValueEnd;

/// A call: its name and its arguments object.
pub(super) type Call = (String, Value);

/// The reading of a JSON value that starts with `{` or `[`, resumed as it
/// grows: [`ValueEnd`] finds where the value closes, reading each byte
/// once; serde then reads the value once. For invalid JSON that the scan
/// misreads, serde is asked again each time the text doubles, so the error
/// is found in linear work too.
#[derive(Debug, Default)]
pub(super) struct JsonScan {
    end: ValueEnd,
    /// The length serde last read.
    checked: usize,
}

#[derive(Debug)]
pub(super) enum Json {
    Pending,
    /// The value, and its length.
    Value(Value, usize),
    Invalid,
}

impl JsonScan {
    /// `text` starts at the value's first byte.
    pub(super) fn read(&mut self, text: &str, at_end: bool, work: &mut ScanCost) -> Json {
        let bytes = text.as_bytes();
        if let Some(end) = self.end.feed(bytes, work) {
            work.add(end);
            return match serde_json::from_str(&text[..end]) {
                Ok(value) => Json::Value(value, end),
                Err(_) => Json::Invalid,
            };
        }
        if at_end {
            return Json::Invalid;
        }
        // From the first bytes on, so that prose which merely starts with
        // `{` is let go at once.
        if bytes.len() >= 2 * self.checked.max(1) {
            work.add(bytes.len());
            self.checked = bytes.len();
            // An error before the end of what arrived is final: serde reads
            // left to right, and more text cannot mend an earlier byte.
            if let Err(e) = serde_json::from_str::<Value>(text)
                && !e.is_eof()
            {
                return Json::Invalid;
            }
        }
        Json::Pending
    }
}

/// The calls a JSON value spells: one call object or (except with
/// `strict`) an array of them. `strict` is the bare-JSON check: the name
/// must be one of these tools and the object nothing but a call.
pub(super) fn calls_in(value: Value, strict: Option<&[String]>) -> Option<Vec<Call>> {
    match value {
        Value::Object(object) => call_of(object, strict).map(|call| vec![call]),
        Value::Array(items) if strict.is_none() && !items.is_empty() => items
            .into_iter()
            .map(|item| match item {
                Value::Object(object) => call_of(object, None),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn call_of(mut object: Map<String, Value>, strict: Option<&[String]>) -> Option<Call> {
    if let Some(names) = strict {
        let only_call_keys = object
            .keys()
            .all(|k| matches!(k.as_str(), "name" | "arguments" | "parameters" | "type" | "id"));
        let typed = object.get("type").is_none_or(|t| t == "function");
        let has_arguments = object.contains_key("arguments") || object.contains_key("parameters");
        let known = object
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| names.iter().any(|known| known == n));
        if !(only_call_keys && typed && has_arguments && known) {
            return None;
        }
    } else if !object.contains_key("name")
        && let Some(Value::Object(function)) = object.remove("function")
    {
        // OpenAI's own shape, leaked: {"type": "function", "function": {…}}.
        return call_of(function, None);
    }
    let name = match object.remove("name")? {
        Value::String(name) if !name.trim().is_empty() => name.trim().to_string(),
        _ => return None,
    };
    let arguments = match object.remove("arguments").or_else(|| object.remove("parameters")) {
        Some(arguments @ Value::Object(_)) => arguments,
        Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Map::new()),
        Some(Value::String(text)) => match serde_json::from_str(&text) {
            Ok(arguments @ Value::Object(_)) => arguments,
            _ => return None,
        },
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(_) => return None,
    };
    Some((name, arguments))
}

/// Call values one after another, separated by whitespace or `;`.
#[derive(Debug, Default)]
pub(super) struct CallSeq {
    pub(super) calls: Vec<Call>,
    /// Where the last call value ends.
    pub(super) end: usize,
    /// Where reading stands: past the separators after `end`.
    pub(super) pos: usize,
    value: Option<(usize, JsonScan)>,
}

#[derive(Debug, PartialEq)]
pub(super) enum SeqStep {
    Pending,
    /// At least one call; `pos` is where something other than a call
    /// value begins (or the end of the text).
    Ended,
    /// The first value is not a call.
    Invalid,
}

impl CallSeq {
    pub(super) fn starting_at(pos: usize) -> Self {
        CallSeq { end: pos, pos, ..CallSeq::default() }
    }

    pub(super) fn step(
        &mut self,
        text: &str,
        at_end: bool,
        strict: Option<&[String]>,
        work: &mut ScanCost,
    ) -> SeqStep {
        loop {
            if let Some((start, scan)) = &mut self.value {
                let start = *start;
                match scan.read(&text[start..], at_end, work) {
                    Json::Pending => return SeqStep::Pending,
                    Json::Value(value, len) => match calls_in(value, strict) {
                        Some(calls) => {
                            self.calls.extend(calls);
                            self.end = start + len;
                            self.pos = self.end;
                            self.value = None;
                        }
                        None => return self.stop(),
                    },
                    Json::Invalid => return self.stop(),
                }
            }
            let rest = &text[self.pos..];
            let skipped =
                rest.len() - rest.trim_start_matches(|c: char| c.is_whitespace() || c == ';').len();
            work.add(skipped);
            self.pos += skipped;
            match text.as_bytes().get(self.pos) {
                None if !at_end => return SeqStep::Pending,
                Some(b'{' | b'[') => self.value = Some((self.pos, JsonScan::default())),
                _ => return self.stop(),
            }
        }
    }

    fn stop(&mut self) -> SeqStep {
        self.value = None;
        if self.calls.is_empty() { SeqStep::Invalid } else { SeqStep::Ended }
    }
}
