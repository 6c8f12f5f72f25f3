//! An MCP server's form (`elicitation`): its message and one field per
//! property of its schema (text, number, integer, yes/no, a choice among
//! values), defaults filled in and required ones marked. Tab and Shift-Tab
//! move between fields, Enter submits once every value has its type and
//! every required one is there, Esc declines.

use axon_protocol::ElicitAction;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};
use serde_json::{Map, Value};

use crate::theme::Theme;
use crate::wrap::truncate;

/// What a field holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Text,
    Number,
    Integer,
    Boolean,
    /// One of these values (←/→ or Space choose).
    Choice(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    /// The schema's title or description.
    pub label: String,
    pub kind: Kind,
    pub required: bool,
    /// As typed (a choice: the chosen value; yes/no: `true`/`false`; empty: none).
    pub value: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub id: String,
    pub server: String,
    pub message: String,
    pub fields: Vec<Field>,
    pub focus: usize,
    /// Why the last submission was refused.
    pub error: Option<String>,
}

/// What a key did to the form.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Still being filled in.
    Editing,
    /// Answered: accepted with its content, declined or cancelled.
    Done(ElicitAction, Option<Map<String, Value>>),
}

impl Form {
    pub fn new(id: String, server: String, message: String, schema: &Value) -> Form {
        let required: Vec<&str> =
            schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let fields = schema["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, property)| field(name, property, required.contains(&name.as_str())))
            .collect();
        Form { id, server, message, fields, focus: 0, error: None }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Outcome {
        let count = self.fields.len();
        // An error stands until the next submission or change.
        self.error = None;
        match key.code {
            KeyCode::Esc => return Outcome::Done(ElicitAction::Decline, None),
            KeyCode::Enter => match self.content() {
                Ok(content) => return Outcome::Done(ElicitAction::Accept, Some(content)),
                Err(error) => self.error = Some(error),
            },
            KeyCode::Tab | KeyCode::Down if count > 0 => self.focus = (self.focus + 1) % count,
            KeyCode::BackTab | KeyCode::Up if count > 0 => {
                self.focus = (self.focus + count - 1) % count;
            }
            // Other shortcuts type nothing into a field.
            _ if key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) => {}
            code => {
                if let Some(field) = self.fields.get_mut(self.focus) {
                    field.edit(code);
                }
            }
        }
        Outcome::Editing
    }

    /// Pasted text goes into the focused field, when it takes text (one
    /// line: a field has no room for more).
    pub fn paste(&mut self, text: &str) {
        if let Some(field) = self.fields.get_mut(self.focus)
            && matches!(field.kind, Kind::Text | Kind::Number | Kind::Integer)
        {
            field.value.push_str(text.lines().next().unwrap_or(""));
            self.error = None;
        }
    }

    /// The values as the schema wants them, or what is wrong with them.
    pub fn content(&self) -> Result<Map<String, Value>, String> {
        let mut content = Map::new();
        for field in &self.fields {
            let text = field.value.trim();
            if text.is_empty() {
                if field.required {
                    return Err(format!("{} is required", field.name));
                }
                continue;
            }
            let value = match &field.kind {
                Kind::Text | Kind::Choice(_) => Value::String(text.to_string()),
                Kind::Boolean => Value::Bool(text == "true"),
                Kind::Integer => text
                    .parse::<i64>()
                    .map(Value::from)
                    .map_err(|_| format!("{} must be a whole number", field.name))?,
                Kind::Number => text
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
                    .ok_or_else(|| format!("{} must be a number", field.name))?,
            };
            content.insert(field.name.clone(), value);
        }
        Ok(content)
    }

    /// The form as lines of at most `width` columns.
    pub fn lines(&self, width: usize, theme: Theme) -> Vec<Line<'static>> {
        let mut lines: Vec<Line<'static>> = self
            .message
            .lines()
            .map(|line| Line::from(Span::styled(truncate(line, width), theme.bold())))
            .collect();
        for (n, field) in self.fields.iter().enumerate() {
            let focused = n == self.focus;
            let mark = if focused { "› " } else { "  " };
            let star = if field.required { "*" } else { "" };
            let value = match &field.kind {
                Kind::Boolean => {
                    if field.value == "true" { "[x] yes" } else { "[ ] no" }.to_string()
                }
                Kind::Choice(_) => format!("‹ {} ›", field.value),
                _ if focused => format!("{}▏", field.value),
                _ => field.value.clone(),
            };
            let label = if field.label.is_empty() || field.label == field.name {
                String::new()
            } else {
                format!("  ({})", field.label)
            };
            let style = if focused { theme.prompt() } else { theme.dim() };
            let text =
                truncate(&format!("{}{star}: {value}{label}", field.name), width.saturating_sub(2));
            lines.push(Line::from(vec![Span::styled(mark, style), Span::styled(text, style)]));
        }
        if let Some(error) = &self.error {
            lines.push(Line::from(Span::styled(
                truncate(&format!("⚠ {error}"), width),
                theme.warning(),
            )));
        }
        lines
    }
}

fn field(name: &str, property: &Value, required: bool) -> Field {
    let text = |key: &str| property[key].as_str().map(str::to_string);
    let choices: Option<Vec<String>> = property["enum"]
        .as_array()
        .map(|values| values.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .or_else(|| {
            property["oneOf"].as_array().map(|options| {
                options.iter().filter_map(|o| o["const"].as_str()).map(str::to_string).collect()
            })
        });
    let kind = match (choices, property["type"].as_str()) {
        (Some(choices), _) if !choices.is_empty() => Kind::Choice(choices),
        (_, Some("boolean")) => Kind::Boolean,
        (_, Some("integer")) => Kind::Integer,
        (_, Some("number")) => Kind::Number,
        _ => Kind::Text,
    };
    let value = match (&property["default"], &kind) {
        (Value::String(s), _) => s.clone(),
        (Value::Bool(b), _) => b.to_string(),
        (Value::Number(n), _) => n.to_string(),
        (_, Kind::Boolean) => "false".to_string(),
        (_, Kind::Choice(choices)) if required => choices[0].clone(),
        _ => String::new(),
    };
    Field {
        name: name.to_string(),
        label: text("title").or_else(|| text("description")).unwrap_or_default(),
        kind,
        required,
        value,
    }
}

impl Field {
    fn edit(&mut self, code: KeyCode) {
        match (&self.kind, code) {
            (Kind::Boolean, KeyCode::Char(' ') | KeyCode::Left | KeyCode::Right) => {
                self.value = if self.value == "true" { "false" } else { "true" }.to_string();
            }
            (Kind::Choice(choices), KeyCode::Char(' ') | KeyCode::Right | KeyCode::Left) => {
                let at = choices.iter().position(|c| *c == self.value);
                let next = match (at, code) {
                    (None, _) => 0,
                    (Some(i), KeyCode::Left) => (i + choices.len() - 1) % choices.len(),
                    (Some(i), _) => (i + 1) % choices.len(),
                };
                self.value = choices[next].clone();
            }
            (Kind::Text | Kind::Number | Kind::Integer, KeyCode::Char(c)) => self.value.push(c),
            (Kind::Text | Kind::Number | Kind::Integer, KeyCode::Backspace) => {
                self.value.pop();
            }
            _ => {}
        }
    }
}
