//! What a program that runs other commands runs, read from its arguments:
//! shells (`-c SCRIPT`, or commands from standard input), `eval`, `trap`,
//! `watch`, `su -c`, `env -S`, `find -exec`, `xargs -I`, `source`, and the
//! bash builtins that evaluate names or arithmetic (`let`, `declare -i`,
//! `printf -v 'a[...]'`, `read`, `[ -v ]`, ...).
//!
//! Guarantees: for the programs named here, `scripts` and `commands` hold
//! what they run as far as their documented options tell; `unreadable`
//! says why the rules cannot read what they run when the words do not show
//! it (a script from standard input, a replacement string in the program's
//! place, a name bash evaluates as code); `indirect` says why a rule on the
//! program alone cannot vouch for it although it can be read (`find -exec`,
//! `env -S`, `trap`, `watch`, `su -c`: programs not taken for interpreters,
//! whose rules are written, or offered, for their ordinary use). Shells and
//! `eval` are interpreters: a rule naming one allows any script, knowingly.
//! Each call is linear in the arguments; nothing recurses here.

use crate::effective::SHELLS;

/// What one program runs besides itself.
#[derive(Debug, Default)]
pub(crate) struct Takes {
    /// Command lines it runs (`sh -c`, `eval`, `trap`, `watch`, `su -c`).
    pub(crate) scripts: Vec<String>,
    /// Commands it runs given as words (`find -exec CMD ;`, `env -S`'s split string).
    pub(crate) commands: Vec<Vec<String>>,
    /// Why the rules cannot read what it runs, when they cannot.
    pub(crate) unreadable: Option<String>,
    /// Why a rule on the program alone cannot vouch for what it runs.
    pub(crate) indirect: Option<String>,
}

impl Takes {
    fn unreadable(why: impl Into<String>) -> Takes {
        Takes { unreadable: Some(why.into()), ..Takes::default() }
    }

    fn note(&mut self, why: impl FnOnce() -> String) {
        if self.unreadable.is_none() {
            self.unreadable = Some(why());
        }
    }
}

/// Builtins that take variable names, and evaluate a subscript in one as
/// arithmetic (which runs any `$(...)` it holds).
const NAME_TAKERS: &[&str] = &[
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "unset",
    "printf",
    "read",
    "mapfile",
    "readarray",
    "test",
    "[",
];

/// Variables bash expands as prompts (running substitutions in them) or runs.
pub(crate) const PROMPTS: &[&str] = &["PS0", "PS1", "PS2", "PS4", "PROMPT_COMMAND"];

/// Programs taking a shell command line after `-c` / `--command`.
const DASH_C: &[&str] = &["su", "runuser", "flock", "script"];

/// Whether `takes` has anything to say about the program `name`.
pub(crate) fn is_special(name: &str) -> bool {
    SHELLS.contains(&name)
        || NAME_TAKERS.contains(&name)
        || DASH_C.contains(&name)
        || matches!(
            name,
            "eval"
                | "source"
                | "."
                | "trap"
                | "watch"
                | "env"
                | "find"
                | "xargs"
                | "let"
                | "hash"
                | "alias"
                | "enable"
        )
}

/// What the program `name` (a basename) runs given `args`.
pub(crate) fn takes(name: &str, args: &[String]) -> Takes {
    match name {
        _ if SHELLS.contains(&name) => shell(name, args),
        "eval" if args.is_empty() => Takes::unreadable("it runs `eval` with nothing in view"),
        "eval" => Takes { scripts: vec![args.join(" ")], ..Takes::default() },
        "source" | "." => match operands(args).next() {
            Some(file) if is_stream(file) => Takes::unreadable(format!(
                "it runs `{name}` on `{file}`, reading commands from a stream"
            )),
            _ => Takes::default(),
        },
        "trap" => indirect(trap(args), "trap"),
        "watch" => indirect(watch(args), "watch"),
        _ if DASH_C.contains(&name) => indirect(dash_c(args), name),
        "env" => env(args),
        "find" => find(args),
        "xargs" => xargs(args),
        "let" => Takes::unreadable(
            "it runs `let`, which evaluates its arguments as arithmetic, and bash evaluates the \
             values of variables there as code",
        ),
        "hash" if has_flag(args, 'p') => {
            Takes::unreadable("it runs `hash -p`, which makes a name run another program")
        }
        "alias" if args.iter().any(|arg| arg.contains('=')) => {
            Takes::unreadable("it defines an alias, which can make a name run anything")
        }
        "enable" if has_flag(args, 'f') => {
            Takes::unreadable("it runs `enable -f`, which loads new builtins from a library")
        }
        _ if NAME_TAKERS.contains(&name) => names(name, args),
        _ => Takes::default(),
    }
}

/// `takes`, marked indirect when it runs a script.
fn indirect(mut takes: Takes, name: &str) -> Takes {
    if !takes.scripts.is_empty() {
        takes.indirect = Some(format!("it runs a command line through `{name}`"));
    }
    takes
}

/// Paths a shell or `source` would read commands from that are a stream,
/// not a file in view (`/dev/stdin`, `/dev/fd/3`, `/proc/self/fd/0`).
fn is_stream(path: &str) -> bool {
    path == "-" || path.contains("/dev/") || path.starts_with("dev/") || path.contains("/proc/")
}

/// Whether a short option word (`-xp`) among `args` holds `flag`.
fn has_flag(args: &[String], flag: char) -> bool {
    args.iter().any(|arg| arg.starts_with('-') && !arg.starts_with("--") && arg.contains(flag))
}

/// The words after the options (`--` ends them).
fn operands(args: &[String]) -> impl Iterator<Item = &String> {
    let mut rest = args;
    while let Some((word, after)) = rest.split_first() {
        if word == "--" {
            rest = after;
            break;
        }
        if !(word.len() > 1 && word.starts_with('-')) {
            break;
        }
        rest = after;
    }
    rest.iter()
}

/// `sh`, `bash`, ... : the script of `-c`, or why the commands are not in
/// view (standard input, a stream). A script file is in view as a file.
fn shell(name: &str, args: &[String]) -> Takes {
    let fish = name == "fish";
    let mut takes = Takes::default();
    let (mut command, mut stdin) = (false, false);
    let mut operand = None;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" || word == "-" {
            operand = words.next();
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (key, value) = match long.split_once('=') {
                Some((key, value)) => (key, Some(value.to_string())),
                None => (long, None),
            };
            match key {
                "version" | "help" => return Takes::default(),
                "command" | "init-command" if fish => {
                    command |= key == "command";
                    if let Some(script) = value.or_else(|| words.next().cloned()) {
                        takes.scripts.push(script);
                    }
                }
                "rcfile" | "init-file" if !fish && value.is_none() => {
                    words.next();
                }
                "debug" | "debug-output" | "profile" | "profile-startup" | "features"
                    if fish && value.is_none() =>
                {
                    words.next();
                }
                _ => {}
            }
            continue;
        }
        let Some(flags) = word.strip_prefix(['-', '+']).filter(|flags| !flags.is_empty()) else {
            operand = Some(word);
            break;
        };
        let minus = word.starts_with('-');
        for (at, flag) in flags.char_indices() {
            let attached = &flags[at + flag.len_utf8()..];
            match flag {
                'c' | 'C' if fish => {
                    command |= flag == 'c';
                    let script = if attached.is_empty() {
                        words.next().cloned()
                    } else {
                        Some(attached.to_string())
                    };
                    takes.scripts.extend(script);
                    break;
                }
                'd' | 'o' | 'p' | 'f' if fish => {
                    if attached.is_empty() {
                        words.next();
                    }
                    break;
                }
                'c' if minus => command = true,
                's' if minus => stdin = true,
                'o' | 'O' => {
                    words.next();
                }
                _ => {}
            }
        }
    }
    if command && !fish {
        match operand {
            Some(script) => takes.scripts.push(script.clone()),
            None => takes.note(|| format!("it runs `{name} -c` without its script in view")),
        }
    } else if !command {
        match operand {
            Some(file) if is_stream(file) => {
                takes.note(|| {
                    format!("it runs `{name}` on `{file}`, reading commands from a stream")
                });
            }
            Some(_) if !stdin => {}
            _ => takes.note(|| format!("it runs `{name}` reading commands from standard input")),
        }
    }
    takes
}

/// `trap ACTION SIGNAL...`: the action runs later, as a script.
fn trap(args: &[String]) -> Takes {
    let mut words =
        args.iter().skip_while(|arg| matches!(arg.as_str(), "-l" | "-p" | "-lp" | "-pl"));
    let action = match words.next() {
        Some(dashes) if dashes == "--" => words.next(),
        other => other,
    };
    match action {
        Some(action)
            if action != "-"
                && !action.is_empty()
                && !action.chars().all(|c| c.is_ascii_digit()) =>
        {
            Takes { scripts: vec![action.clone()], ..Takes::default() }
        }
        _ => Takes::default(),
    }
}

/// `watch [options] COMMAND...`: the words joined run under `sh -c`.
fn watch(args: &[String]) -> Takes {
    let mut rest = args;
    while let Some((word, after)) = rest.split_first() {
        if !word.starts_with('-') || word == "-" {
            break;
        }
        rest = after;
        if word == "--" {
            break;
        }
        let needs_value = matches!(word.as_str(), "-n" | "--interval" | "-q" | "--equexit");
        if needs_value && let Some((_, after)) = rest.split_first() {
            rest = after;
        }
    }
    if rest.is_empty() {
        return Takes::default();
    }
    Takes { scripts: vec![rest.join(" ")], ..Takes::default() }
}

/// `su -c SCRIPT`, `flock FILE -c SCRIPT`, `script -c SCRIPT`.
fn dash_c(args: &[String]) -> Takes {
    let mut takes = Takes::default();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if let Some(script) = word.strip_prefix("--command=") {
            takes.scripts.push(script.to_string());
        } else if word == "--command" {
            takes.scripts.extend(words.next().cloned());
        } else if !word.starts_with("--")
            && let Some(flags) = word.strip_prefix('-')
            && let Some(at) = flags.find('c')
        {
            let attached = &flags[at + 1..];
            if attached.is_empty() {
                takes.scripts.extend(words.next().cloned());
            } else {
                takes.scripts.push(attached.to_string());
            }
        }
    }
    takes
}

/// `env -S STRING` (`--split-string`): the string is split into words
/// that env takes as its own further arguments; the command it makes is
/// returned as `env` followed by them and the rest.
fn env(args: &[String]) -> Takes {
    let mut takes = Takes::default();
    let mut at = 0;
    while let Some(word) = args.get(at) {
        at += 1;
        if word == "--" || !word.starts_with('-') || word == "-" {
            break;
        }
        let split = if let Some(long) = word.strip_prefix("--") {
            match long.split_once('=') {
                Some(("split-string", value)) => Some(value.to_string()),
                None if long == "split-string" => args.get(at).inspect(|_| at += 1).cloned(),
                None if matches!(long, "unset" | "chdir") => {
                    at += 1;
                    None
                }
                _ => None,
            }
        } else {
            let flags = &word[1..];
            let value_at = flags.find(['S', 'u', 'C', 'P']);
            match value_at.map(|i| (flags.as_bytes()[i], &flags[i + 1..])) {
                Some((flag, attached)) => {
                    let value = if attached.is_empty() {
                        args.get(at).inspect(|_| at += 1).cloned()
                    } else {
                        Some(attached.to_string())
                    };
                    value.filter(|_| flag == b'S')
                }
                None => None,
            }
        };
        let Some(split) = split else { continue };
        takes.indirect = Some("it runs a command through `env -S`".to_string());
        match shlex::split(&split) {
            Some(words) => {
                let mut command = vec!["env".to_string()];
                command.extend(words);
                command.extend(args[at..].iter().cloned());
                takes.commands.push(command);
            }
            None => takes.note(|| format!("`env -S` is given `{split}`, which does not split")),
        }
        break;
    }
    takes
}

/// `find ... -exec CMD {} ;` (also `-execdir`, `-ok`, `-okdir`, and `+`).
fn find(args: &[String]) -> Takes {
    let mut takes = Takes::default();
    let mut at = 0;
    while at < args.len() {
        let flag = args[at].as_str();
        at += 1;
        if !matches!(flag, "-exec" | "-execdir" | "-ok" | "-okdir") {
            continue;
        }
        let start = at;
        while at < args.len() {
            let word = args[at].as_str();
            if word == ";" || (word == "+" && args[at - 1] == "{}") {
                break;
            }
            at += 1;
        }
        takes.commands.push(args[start..at].to_vec());
        takes.indirect.get_or_insert_with(|| format!("it runs a command through `find {flag}`"));
        at += 1;
    }
    takes
}

/// `xargs -I R` (`-i`, `--replace`, BSD `-J`): its input can land in the
/// program's place. Otherwise the command after its options is a part.
fn xargs(args: &[String]) -> Takes {
    let replaces =
        || Takes::unreadable("it runs `xargs -I`, which can put its input in the program's place");
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" || word == "-" || !word.starts_with('-') {
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            if long.starts_with("replace") {
                return replaces();
            }
            let valued = matches!(
                long,
                "arg-file"
                    | "delimiter"
                    | "eof"
                    | "max-lines"
                    | "max-args"
                    | "max-procs"
                    | "max-chars"
                    | "process-slot-var"
            );
            if valued {
                words.next();
            }
            continue;
        }
        let flags = &word[1..];
        for (at, flag) in flags.char_indices() {
            if "IiJ".contains(flag) {
                return replaces();
            }
            if "adELnPsRS".contains(flag) {
                if flags[at + 1..].is_empty() {
                    words.next();
                }
                break;
            }
        }
    }
    Takes::default()
}

/// Builtins that take variable names: a name with a subscript or an
/// expansion (`'a[$(rm x)]'`, `"$name"`) is evaluated by bash as code, as is
/// anything `declare -i` or `-n` assigns, and `mapfile -C`'s callback runs.
fn names(name: &str, args: &[String]) -> Takes {
    let evaluated = |word: &str| {
        let name = word.split('=').next().unwrap_or(word);
        name.contains(['[', '$', '`', '…']) || PROMPTS.contains(&name)
    };
    let unreadable = |word: &str| {
        Takes::unreadable(format!("`{name}` is given `{word}`, a name bash evaluates as code"))
    };
    // Options whose value is the next word (or attached), per builtin.
    let valued = match name {
        "read" => "adinNptu",
        "mapfile" | "readarray" => "dnOsuCc",
        "printf" => "v",
        _ => "",
    };
    let mut words = args.iter();
    let mut in_options = !matches!(name, "test" | "[");
    while let Some(word) = words.next() {
        if matches!(name, "test" | "[") {
            if word == "-v"
                && let Some(tested) = words.next()
                && evaluated(tested)
            {
                return unreadable(tested);
            }
            continue;
        }
        if in_options && word == "--" {
            in_options = false;
            continue;
        }
        let option = in_options && word.len() > 1 && word.starts_with(['-', '+']);
        if !option {
            in_options = false;
            if name == "printf" {
                // The format and its arguments are data.
                break;
            }
            if evaluated(word) {
                return unreadable(word);
            }
            continue;
        }
        let flags = &word[1..];
        if matches!(name, "declare" | "typeset" | "local") && flags.contains(['i', 'n']) {
            return Takes::unreadable(format!(
                "it runs `{name} {word}`, whose values bash evaluates as code"
            ));
        }
        if matches!(name, "mapfile" | "readarray") && flags.contains('C') {
            return Takes::unreadable(format!("it runs `{name} -C`, whose callback runs as code"));
        }
        if let Some(at) = flags.find(|c| valued.contains(c)) {
            let flag = flags.as_bytes()[at];
            let attached = &flags[at + 1..];
            let value =
                if attached.is_empty() { words.next().map(String::as_str) } else { Some(attached) };
            // `-v NAME` (printf) and `-a NAME` (read) name a variable.
            if matches!(flag, b'v' | b'a')
                && let Some(value) = value
                && evaluated(value)
            {
                return unreadable(value);
            }
        }
    }
    Takes::default()
}
