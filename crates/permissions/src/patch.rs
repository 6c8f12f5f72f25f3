//! The files an `apply_patch` call names, read from its patch's headers.
//!
//! Guarantees: never fewer files than the tool touches. A header is any
//! line that, trimmed, starts with `*** Add File:`, `*** Update File:`,
//! `*** Delete File:` or `*** Move to:` (the tool reads headers the same
//! way, and only on lines of their own), so a context line that merely
//! holds a marker may add a file here, never hide one.

/// A file a patch names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PatchFile {
    pub(crate) path: String,
    /// Added, or a move's destination: the patch writes it whole.
    pub(crate) created: bool,
}

/// Every file `input` names, each once, in order (`created` if any header
/// creates it).
pub(crate) fn files(input: &str) -> Vec<PatchFile> {
    let mut out: Vec<PatchFile> = Vec::new();
    for line in input.lines() {
        let line = line.trim();
        let found = [
            ("*** Add File:", true),
            ("*** Move to:", true),
            ("*** Update File:", false),
            ("*** Delete File:", false),
        ]
        .iter()
        .find_map(|(marker, created)| Some((line.strip_prefix(marker)?.trim(), *created)));
        let Some((path, created)) = found.filter(|(path, _)| !path.is_empty()) else {
            continue;
        };
        match out.iter_mut().find(|f| f.path == path) {
            Some(file) => file.created |= created,
            None => out.push(PatchFile { path: path.to_string(), created }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_name_the_files() {
        let patch = "*** Begin Patch\n  *** Add File: a.txt \n+*** Delete File: not-a-header\n\
                     *** Update File: b.rs\n*** Move to: c.rs\n@@\n-x\n+y\n*** Delete File: a.txt\n\
                     *** End Patch";
        let found = files(patch);
        let got: Vec<(&str, bool)> = found.iter().map(|f| (f.path.as_str(), f.created)).collect();
        assert_eq!(got, [("a.txt", true), ("b.rs", false), ("c.rs", true)]);
    }
}
