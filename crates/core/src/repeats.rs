//! Calls that teach the model nothing: the same tool with the same
//! arguments returning the same result, again, within one request.
//!
//! Small local models fall into this loop (a call, its result, the same
//! call again) until `max_iterations` ends the run without an answer. The
//! second identical result says so in the result itself; after the third,
//! the next model call is made with the tools withheld
//! (`ProviderRequest::answer_only`), so the run ends with an answer built
//! from what the model already has. A repeat whose result changed (a build
//! that now passes, a server that came up) is new information and is not
//! counted. The count lives for one request: the next user message starts
//! afresh.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use axon_protocol::{ContentPart, ToolCall, ToolOutput};

/// The repeat whose result says that nothing changed.
const NOTE_AT: u32 = 2;
/// The repeat after which the model must answer without tools.
const WITHHOLD_AT: u32 = 3;

/// How often each (call, result) pair came back in this request.
#[derive(Debug, Default)]
pub(crate) struct Repeats {
    seen: HashMap<u64, u32>,
}

/// A call the model repeated until its tools were withheld.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Looping {
    pub(crate) tool: String,
    pub(crate) times: u32,
}

impl Repeats {
    /// Counts each call with its result (before anything is appended to
    /// it), notes a repeat in the result, and says whether the model is
    /// looping: the caller then withholds the tools for the next call.
    pub(crate) fn observe(
        &mut self,
        calls: &[&ToolCall],
        outputs: &mut [ToolOutput],
    ) -> Option<Looping> {
        let mut looping: Option<Looping> = None;
        for (call, output) in calls.iter().zip(outputs.iter_mut()) {
            let times = self.seen.entry(fingerprint(call, output)).or_default();
            *times += 1;
            let times = *times;
            if times >= NOTE_AT {
                output.content.push(ContentPart::text(format!(
                    "\n(This is call number {times} of {} with these same arguments in this \
                     request, and the result is the same as before: nothing changed. Use it to \
                     answer, or do something different.)",
                    call.name
                )));
            }
            if times >= WITHHOLD_AT && looping.as_ref().is_none_or(|l| l.times < times) {
                looping = Some(Looping { tool: call.name.clone(), times });
            }
        }
        if looping.is_some()
            && let Some(last) = outputs.last_mut()
        {
            last.content.push(ContentPart::text(
                "\nTools are withheld for your next reply: answer the request now with what the \
                 results above give you, and say what is missing if anything is.",
            ));
        }
        looping
    }
}

/// One hash of the tool, its arguments and its whole result.
fn fingerprint(call: &ToolCall, output: &ToolOutput) -> u64 {
    let mut hasher = DefaultHasher::new();
    call.name.hash(&mut hasher);
    call.arguments.to_string().hash(&mut hasher);
    output.is_error.hash(&mut hasher);
    serde_json::to_string(&output.content).unwrap_or_default().hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(path: &str) -> ToolCall {
        ToolCall { id: "c".into(), name: "read_file".into(), arguments: json!({"path": path}) }
    }

    #[test]
    fn the_third_identical_result_withholds_the_tools() {
        let mut repeats = Repeats::default();
        let a = call("a");
        let mut first = [ToolOutput::text("1 | x")];
        assert_eq!(repeats.observe(&[&a], &mut first), None);
        assert_eq!(first[0].content.len(), 1, "a first call is left alone");
        let mut second = [ToolOutput::text("1 | x")];
        assert_eq!(repeats.observe(&[&a], &mut second), None);
        assert!(second[0].text_content().contains("nothing changed"), "{second:?}");
        let mut third = [ToolOutput::text("1 | x")];
        let looping = repeats.observe(&[&a], &mut third);
        assert_eq!(looping, Some(Looping { tool: "read_file".into(), times: 3 }));
        assert!(third[0].text_content().contains("Tools are withheld"), "{third:?}");
    }

    #[test]
    fn a_changed_result_or_other_arguments_are_not_repeats() {
        let mut repeats = Repeats::default();
        for n in 0..5 {
            let mut out = [ToolOutput::text(format!("run {n}"))];
            assert_eq!(repeats.observe(&[&call("a")], &mut out), None);
            assert_eq!(out[0].content.len(), 1, "a new result is news");
            let mut other = [ToolOutput::text("same")];
            let _ = repeats.observe(&[&call(&format!("f{n}"))], &mut other);
            assert_eq!(other[0].content.len(), 1, "other arguments are another call");
        }
    }
}
