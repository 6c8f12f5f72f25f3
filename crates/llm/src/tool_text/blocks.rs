//! Reading one call block from the text after its marker, resumably: each
//! reader keeps where it stands between deltas and reads each new byte a
//! bounded number of times. A reader's answer, once it gives one, is the
//! answer for every longer text that starts the same way, so a block is
//! read the same however its text is split.

use serde_json::{Map, Value};

use super::ScanCost;
use super::json::{Call, CallSeq, Json, JsonScan, SeqStep};

/// What a reader knows so far.
#[derive(Debug)]
pub(super) enum Step {
    /// More text could change the answer.
    Undecided,
    /// The block holds these calls and ends this many bytes after its marker.
    Calls(Vec<Call>, usize),
    /// Not a call: the marker is text, and reading resumes after it.
    Malformed,
}

/// Whether `text` at `at` starts with `literal`, or might once more comes.
#[derive(Debug, PartialEq)]
pub(super) enum Match {
    Yes,
    /// The text ends inside what could be the literal.
    Maybe,
    No,
}

pub(super) fn match_at(text: &str, at: usize, literal: &str) -> Match {
    let rest = &text.as_bytes()[at.min(text.len())..];
    if rest.starts_with(literal.as_bytes()) {
        Match::Yes
    } else if literal.as_bytes().starts_with(rest) {
        Match::Maybe
    } else {
        Match::No
    }
}

/// Where the whitespace from `at` ends.
fn skip_space(text: &str, at: usize, work: &mut ScanCost) -> usize {
    let rest = &text[at..];
    let skipped = rest.len() - rest.trim_start().len();
    work.add(skipped);
    at + skipped
}

/// Names of functions and parameters: long runs are prose, not a name.
const NAME_LIMIT: usize = 128;

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// The kinds of block, by the marker that opens them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Marker {
    ToolCall,
    PythonTag,
    Function,
    ToolCalls,
}

impl Marker {
    pub(super) const ALL: [Marker; 4] =
        [Marker::ToolCall, Marker::PythonTag, Marker::Function, Marker::ToolCalls];

    pub(super) fn text(self) -> &'static str {
        match self {
            Marker::ToolCall => "<tool_call>",
            Marker::PythonTag => "<|python_tag|>",
            Marker::Function => "<function=",
            Marker::ToolCalls => "[TOOL_CALLS]",
        }
    }
}

/// The reading of one block.
#[derive(Debug)]
pub(super) enum Block {
    Hermes(Hermes),
    PythonTag(CallSeq),
    Function(Function),
    Mistral(Mistral),
}

impl Block {
    pub(super) fn new(marker: Marker) -> Self {
        match marker {
            Marker::ToolCall => Block::Hermes(Hermes::Open(0)),
            Marker::PythonTag => Block::PythonTag(CallSeq::default()),
            Marker::Function => Block::Function(Function::default()),
            Marker::ToolCalls => Block::Mistral(Mistral::Open(0)),
        }
    }

    /// Reads on; `body` is the text after the marker.
    pub(super) fn step(&mut self, body: &str, at_end: bool, work: &mut ScanCost) -> Step {
        match self {
            Block::Hermes(hermes) => hermes.step(body, at_end, work),
            Block::PythonTag(seq) => match seq.step(body, at_end, None, work) {
                SeqStep::Pending => Step::Undecided,
                SeqStep::Invalid => Step::Malformed,
                SeqStep::Ended => Step::Calls(std::mem::take(&mut seq.calls), seq.end),
            },
            Block::Function(function) => function.step(body, at_end, work),
            Block::Mistral(mistral) => mistral.step(body, at_end, work),
        }
    }
}

/// `<tool_call>` then call JSON or a `<function=…>` element, then
/// `</tool_call>`. A call whose closing tag never comes is still a call;
/// what follows it is prose.
#[derive(Debug)]
pub(super) enum Hermes {
    /// Whitespace is skipped up to here.
    Open(usize),
    Json(CallSeq),
    /// The `<function=` element, starting this far into the body.
    Xml(Function, usize),
    /// The calls are read; the closing tag may follow from `from`.
    Close {
        calls: Vec<Call>,
        end: usize,
        from: usize,
    },
}

const TOOL_CALL_CLOSE: &str = "</tool_call>";

impl Hermes {
    fn step(&mut self, body: &str, at_end: bool, work: &mut ScanCost) -> Step {
        loop {
            match self {
                Hermes::Open(pos) => {
                    let pos = skip_space(body, *pos, work);
                    *self = Hermes::Open(pos);
                    match body.as_bytes().get(pos) {
                        None if at_end => return Step::Malformed,
                        None => return Step::Undecided,
                        Some(b'{' | b'[') => *self = Hermes::Json(CallSeq::starting_at(pos)),
                        Some(_) => match match_at(body, pos, Marker::Function.text()) {
                            Match::Yes => {
                                let start = pos + Marker::Function.text().len();
                                *self = Hermes::Xml(Function::default(), start);
                            }
                            Match::Maybe if !at_end => return Step::Undecided,
                            _ => return Step::Malformed,
                        },
                    }
                }
                Hermes::Json(seq) => match seq.step(body, at_end, None, work) {
                    SeqStep::Pending => return Step::Undecided,
                    SeqStep::Invalid => return Step::Malformed,
                    SeqStep::Ended => {
                        let calls = std::mem::take(&mut seq.calls);
                        *self = Hermes::Close { calls, end: seq.end, from: seq.pos };
                    }
                },
                Hermes::Xml(function, start) => {
                    let start = *start;
                    match function.step(&body[start..], at_end, work) {
                        Step::Calls(calls, used) => {
                            let end = start + used;
                            *self = Hermes::Close { calls, end, from: end };
                        }
                        other => return other,
                    }
                }
                Hermes::Close { calls, end, from } => {
                    *from = skip_space(body, *from, work);
                    return match match_at(body, *from, TOOL_CALL_CLOSE) {
                        Match::Yes => {
                            Step::Calls(std::mem::take(calls), *from + TOOL_CALL_CLOSE.len())
                        }
                        Match::Maybe if !at_end => Step::Undecided,
                        _ => Step::Calls(std::mem::take(calls), *end),
                    };
                }
            }
        }
    }
}

/// The text after `<function=`: `NAME>` then a JSON object and
/// `</function>` (Llama 3.1), or Qwen3-Coder's `<parameter=KEY>VALUE</parameter>`
/// elements up to `</function>`.
#[derive(Debug, Default)]
pub(super) struct Function {
    name: String,
    stage: FunctionStage,
}

#[derive(Debug, Default)]
enum FunctionStage {
    #[default]
    Name,
    Open(usize),
    Json(usize, JsonScan),
    /// The JSON arguments are read; `</function>` may follow from `from`.
    Close {
        arguments: Value,
        end: usize,
        from: usize,
    },
    Params(Params),
}

const FUNCTION_CLOSE: &str = "</function>";
const PARAMETER: &str = "<parameter=";
const PARAMETER_CLOSE: &str = "</parameter>";

impl Function {
    pub(super) fn step(&mut self, body: &str, at_end: bool, work: &mut ScanCost) -> Step {
        loop {
            match &mut self.stage {
                FunctionStage::Name => {
                    // Bounded by NAME_LIMIT, so read again whole each time.
                    let bytes = body.as_bytes();
                    let run = bytes.iter().take(NAME_LIMIT + 1).take_while(|&&b| is_name_byte(b));
                    let len = run.count();
                    work.add(len + 1);
                    match bytes.get(len) {
                        Some(b'>') if len > 0 && len <= NAME_LIMIT => {
                            self.name = body[..len].to_string();
                            self.stage = FunctionStage::Open(len + 1);
                        }
                        None if !at_end && len <= NAME_LIMIT => return Step::Undecided,
                        _ => return Step::Malformed,
                    }
                }
                FunctionStage::Open(pos) => {
                    let pos = skip_space(body, *pos, work);
                    self.stage = FunctionStage::Open(pos);
                    if body.as_bytes().get(pos) == Some(&b'{') {
                        self.stage = FunctionStage::Json(pos, JsonScan::default());
                        continue;
                    }
                    match (match_at(body, pos, FUNCTION_CLOSE), match_at(body, pos, PARAMETER)) {
                        (Match::Yes, _) => {
                            let call = (std::mem::take(&mut self.name), Value::Object(Map::new()));
                            return Step::Calls(vec![call], pos + FUNCTION_CLOSE.len());
                        }
                        (_, Match::Yes) => self.stage = FunctionStage::Params(Params::at(pos)),
                        (Match::Maybe, _) | (_, Match::Maybe) if !at_end => {
                            return Step::Undecided;
                        }
                        _ => return Step::Malformed,
                    }
                }
                FunctionStage::Json(start, scan) => {
                    let start = *start;
                    match scan.read(&body[start..], at_end, work) {
                        Json::Pending => return Step::Undecided,
                        Json::Value(arguments @ Value::Object(_), len) => {
                            let end = start + len;
                            self.stage = FunctionStage::Close { arguments, end, from: end };
                        }
                        Json::Value(..) | Json::Invalid => return Step::Malformed,
                    }
                }
                FunctionStage::Close { arguments, end, from } => {
                    *from = skip_space(body, *from, work);
                    let used = match match_at(body, *from, FUNCTION_CLOSE) {
                        Match::Yes => *from + FUNCTION_CLOSE.len(),
                        Match::Maybe if !at_end => return Step::Undecided,
                        _ => *end,
                    };
                    let call = (std::mem::take(&mut self.name), std::mem::take(arguments));
                    return Step::Calls(vec![call], used);
                }
                FunctionStage::Params(params) => {
                    return match params.step(body, at_end, work) {
                        ParamsStep::Pending => Step::Undecided,
                        ParamsStep::Malformed => Step::Malformed,
                        ParamsStep::Done(used) => {
                            let arguments = Value::Object(std::mem::take(&mut params.arguments));
                            Step::Calls(vec![(std::mem::take(&mut self.name), arguments)], used)
                        }
                    };
                }
            }
        }
    }
}

/// Qwen3-Coder's parameters: `<parameter=KEY>\nVALUE\n</parameter>`, up to
/// `</function>`. A value missing its closing tag runs to the next
/// parameter or the function's end, as Qwen's own parser reads it.
#[derive(Debug)]
struct Params {
    arguments: Map<String, Value>,
    pos: usize,
    /// The parameter being read: its key, where its value starts, and where
    /// to look next for the tag that ends it.
    value: Option<(String, usize, usize)>,
}

enum ParamsStep {
    Pending,
    Malformed,
    /// Read; the function ends this many bytes into the body.
    Done(usize),
}

impl Params {
    fn at(pos: usize) -> Self {
        Params { arguments: Map::new(), pos, value: None }
    }

    fn step(&mut self, body: &str, at_end: bool, work: &mut ScanCost) -> ParamsStep {
        loop {
            if let Some((key, start, from)) = &mut self.value {
                let (value_end, next) = match value_end(body, from, at_end, work) {
                    Some(found) => found,
                    None if at_end => (body.len(), body.len()),
                    None => return ParamsStep::Pending,
                };
                let value = parameter_value(&body[*start..value_end]);
                self.arguments.insert(std::mem::take(key), value);
                self.pos = next;
                self.value = None;
            }
            self.pos = skip_space(body, self.pos, work);
            let pos = self.pos;
            if pos == body.len() {
                return if at_end { ParamsStep::Done(pos) } else { ParamsStep::Pending };
            }
            match (match_at(body, pos, FUNCTION_CLOSE), match_at(body, pos, PARAMETER)) {
                (Match::Yes, _) => return ParamsStep::Done(pos + FUNCTION_CLOSE.len()),
                (_, Match::Yes) => {
                    let key_start = pos + PARAMETER.len();
                    let head = &body.as_bytes()[key_start..];
                    let window = &head[..head.len().min(NAME_LIMIT + 1)];
                    work.add(window.len());
                    match window.iter().position(|&b| matches!(b, b'>' | b'<' | b'\n')) {
                        Some(len) if window[len] == b'>' && len > 0 => {
                            let key = body[key_start..key_start + len].trim().to_string();
                            let start = key_start + len + 1;
                            self.value = Some((key, start, start));
                        }
                        None if !at_end && window.len() <= NAME_LIMIT => {
                            return ParamsStep::Pending;
                        }
                        _ => return ParamsStep::Malformed,
                    }
                }
                // A closing tag cut off by the end of the reply is prose.
                (Match::Maybe, _) | (_, Match::Maybe) if at_end => return ParamsStep::Done(pos),
                (Match::Maybe, _) | (_, Match::Maybe) => return ParamsStep::Pending,
                _ => return ParamsStep::Malformed,
            }
        }
    }
}

/// Looks from `*from` for the tag that ends a parameter's value: its own
/// `</parameter>` (then reading goes on after it), or the next
/// `<parameter=` or `</function>` (reading goes on at it). Returns where
/// the value ends and where reading goes on; `None` while not found.
fn value_end(
    body: &str,
    from: &mut usize,
    at_end: bool,
    work: &mut ScanCost,
) -> Option<(usize, usize)> {
    let bytes = body.as_bytes();
    while let Some(offset) = bytes[*from..].iter().position(|&b| b == b'<') {
        work.add(offset + 1);
        let at = *from + offset;
        let mut maybe = false;
        for (tag, past) in [(PARAMETER_CLOSE, true), (PARAMETER, false), (FUNCTION_CLOSE, false)] {
            match match_at(body, at, tag) {
                Match::Yes => return Some((at, if past { at + tag.len() } else { at })),
                Match::Maybe => maybe = true,
                Match::No => {}
            }
        }
        if maybe && !at_end {
            // Cut off inside what may be a tag: look here again.
            *from = at;
            return None;
        }
        *from = at + 1;
    }
    work.add(bytes.len() - *from);
    *from = bytes.len();
    None
}

/// A parameter's text as a value: the newline after the opening tag and
/// the one before the closing tag belong to the format, not the value;
/// the rest is JSON when it reads as JSON, else a string.
fn parameter_value(raw: &str) -> Value {
    let raw = raw.strip_prefix('\n').unwrap_or(raw);
    let raw = raw.strip_suffix('\n').unwrap_or(raw);
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// `[TOOL_CALLS]` then an array (or objects) of calls, or
/// `NAME[CALL_ID]id[ARGS]{…}` (Mistral's newer tokenizers; the id is
/// optional).
#[derive(Debug)]
pub(super) enum Mistral {
    /// Whitespace is skipped up to here.
    Open(usize),
    Seq(CallSeq),
    Name(usize),
    /// After `NAME[CALL_ID]`: the id runs from here to `[ARGS]`.
    Id {
        name: String,
        start: usize,
    },
    Args {
        name: String,
        pos: usize,
    },
    Json {
        name: String,
        start: usize,
        scan: JsonScan,
    },
}

const ARGS: &str = "[ARGS]";
const CALL_ID: &str = "[CALL_ID]";

impl Mistral {
    fn step(&mut self, body: &str, at_end: bool, work: &mut ScanCost) -> Step {
        loop {
            match self {
                Mistral::Open(pos) => {
                    let pos = skip_space(body, *pos, work);
                    *self = Mistral::Open(pos);
                    match body.as_bytes().get(pos) {
                        None if !at_end => return Step::Undecided,
                        Some(b'{' | b'[') => *self = Mistral::Seq(CallSeq::starting_at(pos)),
                        Some(&b) if is_name_byte(b) => *self = Mistral::Name(pos),
                        _ => return Step::Malformed,
                    }
                }
                Mistral::Seq(seq) => {
                    return match seq.step(body, at_end, None, work) {
                        SeqStep::Pending => Step::Undecided,
                        SeqStep::Invalid => Step::Malformed,
                        SeqStep::Ended => Step::Calls(std::mem::take(&mut seq.calls), seq.end),
                    };
                }
                Mistral::Name(start) => {
                    let start = *start;
                    let Some((len, tag)) =
                        run_then_tag(body, start, &[ARGS, CALL_ID], at_end, work)
                    else {
                        return Step::Undecided;
                    };
                    let name = body[start..start + len].to_string();
                    let after = start + len + tag.map_or(0, str::len);
                    *self = match tag {
                        Some(ARGS) => Mistral::Args { name, pos: after },
                        Some(_) => Mistral::Id { name, start: after },
                        None => return Step::Malformed,
                    };
                }
                Mistral::Id { name, start } => {
                    let start = *start;
                    let Some((len, tag)) = run_then_tag(body, start, &[ARGS], at_end, work) else {
                        return Step::Undecided;
                    };
                    match tag {
                        Some(_) => {
                            let name = std::mem::take(name);
                            *self = Mistral::Args { name, pos: start + len + ARGS.len() };
                        }
                        None => return Step::Malformed,
                    }
                }
                Mistral::Args { name, pos } => {
                    let pos = skip_space(body, *pos, work);
                    match body.as_bytes().get(pos) {
                        None if !at_end => return Step::Undecided,
                        Some(b'{') => {
                            let name = std::mem::take(name);
                            *self = Mistral::Json { name, start: pos, scan: JsonScan::default() };
                        }
                        _ => return Step::Malformed,
                    }
                }
                Mistral::Json { name, start, scan } => {
                    return match scan.read(&body[*start..], at_end, work) {
                        Json::Pending => Step::Undecided,
                        Json::Value(arguments @ Value::Object(_), len) => {
                            Step::Calls(vec![(std::mem::take(name), arguments)], *start + len)
                        }
                        Json::Value(..) | Json::Invalid => Step::Malformed,
                    };
                }
            }
        }
    }
}

/// A run of name bytes from `start` (1 to [`NAME_LIMIT`] long) and the tag
/// of `tags` right after it: `Some((len, Some(tag)))`, or `Some((len,
/// None))` when no tag follows (the block is malformed); `None` while the
/// text so far cannot tell.
fn run_then_tag(
    body: &str,
    start: usize,
    tags: &[&'static str],
    at_end: bool,
    work: &mut ScanCost,
) -> Option<(usize, Option<&'static str>)> {
    let bytes = &body.as_bytes()[start..];
    let len = bytes.iter().take(NAME_LIMIT + 1).take_while(|&&b| is_name_byte(b)).count();
    work.add(len + 1);
    if len > NAME_LIMIT {
        return Some((len, None));
    }
    if len == bytes.len() {
        return if at_end { Some((len, None)) } else { None };
    }
    if len == 0 {
        return Some((len, None));
    }
    let at = start + len;
    let mut maybe = false;
    for &tag in tags {
        match match_at(body, at, tag) {
            Match::Yes => return Some((len, Some(tag))),
            Match::Maybe => maybe = true,
            Match::No => {}
        }
    }
    if maybe && !at_end { None } else { Some((len, None)) }
}
