//! The CPU variant chosen at run time (`--features cpu-variants`): the
//! choice over every combination of features, and the real load on this
//! CPU from the libraries this build made.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use axon_local::variants::{VARIANTS, choose, file_name, found_dir, load, needs, would_choose};
use proptest::prelude::*;

/// Every feature some variant needs.
fn all_features() -> Vec<&'static str> {
    let set: BTreeSet<&'static str> =
        VARIANTS.iter().flat_map(|(name, _, _)| needs(name)).collect();
    set.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the CPU has and whichever libraries are present, the chosen
    /// variant needs nothing the CPU lacks, its library is present, and no
    /// variant before it in the order of preference would have fitted.
    #[test]
    fn prop_the_chosen_variant_runs_here_and_is_the_best_that_does(
        has_mask in proptest::collection::vec(any::<bool>(), all_features().len()),
        present_mask in proptest::collection::vec(any::<bool>(), VARIANTS.len()),
    ) {
        let features = all_features();
        let has = |f: &str| features.iter().position(|x| *x == f).is_some_and(|i| has_mask[i]);
        let present = |name: &str| VARIANTS.iter().position(|(n, _, _)| *n == name).is_some_and(|i| present_mask[i]);
        let fits = |(name, _, _): &(&str, Option<&str>, &[&str])| needs(name).iter().all(|f| has(f)) && present(name);
        match choose(has, present) {
            Some(chosen) => {
                let at = VARIANTS.iter().position(|(n, _, _)| *n == chosen).unwrap();
                prop_assert!(fits(&VARIANTS[at]), "{chosen} does not fit");
                prop_assert!(!VARIANTS[..at].iter().any(fits), "a better variant than {chosen} fitted");
            }
            None => prop_assert!(!VARIANTS.iter().any(fits)),
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn amx_is_chosen_only_with_the_kernels_grant_and_plain_x86_64_always_fits() {
    let everything_but_amx = |f: &str| f != "amx";
    assert_eq!(choose(|_| true, |_| true), Some("sapphirerapids"));
    assert_eq!(choose(everything_but_amx, |_| true), Some("zen4"));
    // An AVX2 machine (Haswell to today's small cores).
    let avx2 = |f: &str| matches!(f, "avx2" | "fma" | "f16c" | "bmi2" | "avx" | "sse4.2");
    assert_eq!(choose(avx2, |_| true), Some("haswell"));
    // QEMU's default CPU model: SSE2 only; the baseline needs nothing.
    assert_eq!(choose(|_| false, |_| true), Some("x64"));
    // A package missing the best library falls back, never fails.
    assert_eq!(choose(avx2, |name| name != "haswell"), Some("piledriver"));
}

/// The table as ggml's CMake list spells two of them out in full.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_variant_needs_its_bases_features_and_its_own() {
    let zen4 = "sse4.2 avx f16c fma avx2 bmi2 avx512f avx512cd avx512vl avx512dq avx512bw \
                avx512vnni avx512vbmi avx512bf16";
    assert_eq!(
        needs("zen4").iter().copied().collect::<BTreeSet<_>>(),
        zen4.split_whitespace().collect::<BTreeSet<_>>()
    );
    assert_eq!(needs("sapphirerapids").last(), Some(&"amx"));
    assert!(needs("x64").is_empty());
    // Every base named exists, and comes later (a worse variant).
    for (at, (name, base, _)) in VARIANTS.iter().enumerate() {
        if let Some(base) = base {
            let base_at = VARIANTS.iter().position(|(n, _, _)| n == base);
            assert!(base_at.is_some_and(|b| b > at), "{name}'s base {base}");
        }
    }
}

#[test]
fn every_variant_has_a_distinct_library_name() {
    let names: BTreeSet<String> = VARIANTS.iter().map(|(n, _, _)| file_name(n)).collect();
    assert_eq!(names.len(), VARIANTS.len());
    assert!(names.iter().all(|n| n.starts_with("libggml-cpu-") && n.ends_with(".so")));
}

/// The build made every variant of this architecture, and the one chosen
/// for this CPU loads into llama.cpp (which checks it again) without dying.
#[test]
fn this_build_has_every_variant_and_this_cpu_loads_one() {
    let dir = found_dir().expect("the build's variants folder");
    for (name, _, _) in VARIANTS {
        assert!(dir.join(file_name(name)).is_file(), "{name} missing from {}", dir.display());
    }
    let chosen = would_choose().expect("some variant fits every CPU");
    assert_eq!(load().expect("the chosen variant loads"), chosen);
}
