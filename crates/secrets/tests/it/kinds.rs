//! Each kind of secret the issue names is found, named, and masked to
//! `[SECRET:kind:abcd…]` on the right line; masking is idempotent.

use axon_secrets::{Masked, PLACEHOLDER_PREFIX, builtin, find, has_placeholder, mask, placeholder};

use crate::samples::samples;

#[test]
fn every_sample_is_found_with_its_kind_and_masked() {
    for sample in samples() {
        let text = format!("first line\n{}\nlast line\n", sample.line);
        let findings = find(&text);
        let Some(finding) = findings.iter().find(|f| text[f.span.clone()].contains(&sample.secret))
        else {
            panic!("{}: not found in {:?}; found {findings:?}", sample.what, sample.line);
        };
        assert!(sample.kinds.contains(&finding.kind), "{}: named {}", sample.what, finding.kind);
        let (masked, found) = mask(&text);
        assert!(!masked.contains(&sample.secret), "{}: {masked}", sample.what);
        // What was masked may be wider than the secret (`Bearer eyJ…`).
        let first4: String = text[finding.span.clone()].chars().take(4).collect();
        assert!(
            masked.contains(&format!("{PLACEHOLDER_PREFIX}{}:{first4}…]", finding.kind)),
            "{}: {masked}",
            sample.what
        );
        assert!(
            found.contains(&Masked { kind: finding.kind, line: 2 }),
            "{}: {found:?}",
            sample.what
        );
        assert!(masked.starts_with("first line\n") && masked.ends_with("\nlast line\n"));
    }
}

#[test]
fn lines_are_counted_across_secrets_that_span_lines() {
    let all = samples();
    let text: String = all.iter().map(|s| format!("{}\n", s.line)).collect();
    let (_, found) = mask(&text);
    let mut line = 1;
    let mut expected = Vec::new();
    for sample in &all {
        expected.push(line);
        line += sample.line.matches('\n').count() + 1;
    }
    let lines: Vec<usize> = found.iter().map(|m| m.line).collect();
    for want in &expected {
        assert!(lines.contains(want), "line {want} not reported: {found:?}");
    }
}

#[test]
fn masked_text_masks_to_itself() {
    let text: String = samples().iter().map(|s| format!("{}\n", s.line)).collect();
    let (once, found) = mask(&text);
    assert!(!found.is_empty());
    let (twice, again) = mask(&once);
    assert_eq!(once, twice);
    assert!(again.is_empty(), "{again:?}");
    assert!(has_placeholder(&once));
    assert!(!has_placeholder(&text));
    // A placeholder under a key-like name is not a secret either.
    let assigned = format!("api_key = {}", placeholder("generic-api-key", "abcdefgh"));
    assert!(find(&assigned).is_empty(), "{:?}", find(&assigned));
}

#[test]
fn a_placeholder_keeps_four_characters_whole() {
    assert_eq!(placeholder("jwt", "eyJhbGci"), "[SECRET:jwt:eyJh…]");
    assert_eq!(placeholder("generic-api-key", "ünï€x"), "[SECRET:generic-api-key:ünï€…]");
    assert_eq!(placeholder("k", "ab"), "[SECRET:k:ab…]");
}

/// Every gitleaks rule compiles with the `regex` crate once Go's literal
/// braces are escaped; a rule that did not would be named here, not
/// dropped silently. Path-only rules (file names, not text) are the only
/// ones left out.
#[test]
fn every_rule_compiles_or_is_named() {
    let rules = builtin();
    rules.compile_all();
    let skipped = rules.skipped();
    let not_path: Vec<_> = skipped.iter().filter(|(_, why)| why != "needs a file path").collect();
    assert!(not_path.is_empty(), "rules the regex crate cannot compile: {not_path:?}");
    let path_only: Vec<&str> = skipped.iter().map(|(id, _)| id.as_str()).collect();
    let expected = [
        "freemius-secret-key",
        "hashicorp-tf-password",
        "kubernetes-secret-yaml",
        "nuget-config-password",
        "pkcs12-file",
    ];
    assert_eq!(path_only, expected, "path-only rules changed");
    assert!(rules.len() >= 217 + 6, "{}", rules.len());
}
