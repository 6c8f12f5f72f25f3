//! The CPU level llama.cpp was compiled for, and whether this CPU has it.
//!
//! Guarantees:
//! - The build never depends on the build machine's CPU (unless the person
//!   building asks for `-march=native`): `.cargo/config.toml` names one
//!   portable level, and `build.rs` records the features it implies.
//! - Before a model is loaded, every recorded feature is checked on the
//!   running CPU with the standard library's detection, which also checks
//!   that the OS saves the registers involved (XCR0), so a VM that
//!   advertises AVX in CPUID but withholds its state counts as not having it.
//!   A missing feature is a [`crate::LocalError::Cpu`], never SIGILL.

/// The level this build's llama.cpp was compiled for: `x86-64-v3`,
/// `armv8-a`, or `native` for a build made for its own machine.
pub fn variant() -> &'static str {
    env!("AXON_LOCAL_CPU_VARIANT")
}

/// The CPU features llama.cpp's code in this build may execute.
pub fn needed() -> Vec<&'static str> {
    env!("AXON_LOCAL_CPU_NEEDS").split(',').filter(|f| !f.is_empty()).collect()
}

/// The needed features this CPU (with this OS) lacks.
pub fn missing() -> Vec<&'static str> {
    missing_of(&needed(), has)
}

/// The features of `needs` that `has` denies.
fn missing_of(needs: &[&'static str], has: impl Fn(&str) -> bool) -> Vec<&'static str> {
    needs.iter().copied().filter(|feature| !has(feature)).collect()
}

/// One line for `axon --version` and `axon doctor`: the level, what it
/// needs, and whether this CPU has it.
pub fn summary() -> String {
    let needs = needed();
    let listed = if needs.is_empty() {
        String::new()
    } else {
        format!(" ({})", needs.iter().map(|f| f.to_uppercase()).collect::<Vec<_>>().join(" "))
    };
    let verdict = match (variant(), missing().as_slice()) {
        ("native", _) => "built for the build machine's CPU; may fail on any other".to_string(),
        (_, []) => "this CPU has it".to_string(),
        (_, lacking) => format!("this CPU lacks {}", lacking.join(", ").to_uppercase()),
    };
    format!("{}{listed}: {verdict}", variant())
}

#[cfg(target_arch = "x86_64")]
fn has(feature: &str) -> bool {
    use std::arch::is_x86_feature_detected as x86;
    match feature {
        "sse4.2" => x86!("sse4.2"),
        "avx" => x86!("avx"),
        "avx2" => x86!("avx2"),
        "fma" => x86!("fma"),
        "f16c" => x86!("f16c"),
        "bmi2" => x86!("bmi2"),
        "avxvnni" => x86!("avxvnni"),
        "avx512f" => x86!("avx512f"),
        "avx512vbmi" => x86!("avx512vbmi"),
        "avx512vnni" => x86!("avx512vnni"),
        "avx512bf16" => x86!("avx512bf16"),
        // AMX also needs the kernel's per-process grant, which the standard
        // library does not ask for; a build with AMX is never portable.
        _ => false,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn has(_feature: &str) -> bool {
    // Non-x86 builds record no features: armv8-a's NEON is in every
    // aarch64 CPU.
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_build_is_portable_and_runs_here() {
        // The default build (.cargo/config.toml) names a portable level; a
        // build someone made with -march=native says so instead.
        assert_ne!(variant(), "", "build.rs recorded no level");
        if variant() != "native" {
            assert!(!needed().iter().any(|f| f.starts_with("amx")), "{:?}", needed());
        }
        // Every machine that runs these tests has what the build needs:
        // otherwise loading a model must fail with LocalError::Cpu, which
        // tests/it/smollm2.rs would show.
        assert!(summary().starts_with(variant()), "{}", summary());
    }

    #[test]
    fn a_cpu_without_a_needed_feature_gets_a_message_not_a_crash() {
        let needs = ["sse4.2", "avx", "avx2", "fma", "f16c", "bmi2"];
        let old_cpu = |feature: &str| !matches!(feature, "avx2" | "fma" | "bmi2");
        let lacking = missing_of(&needs, old_cpu);
        assert_eq!(lacking, ["avx2", "fma", "bmi2"]);
        let error = crate::LocalError::Cpu {
            variant: "x86-64-v3".into(),
            missing: lacking.join(", ").to_uppercase(),
        };
        let message = error.to_string();
        assert!(message.contains("AVX2, FMA, BMI2"), "{message}");
        assert!(message.contains("x86-64-v3"), "{message}");
        assert!(message.contains("-march=native"), "{message}");
        assert!(missing_of(&needs, |_| true).is_empty());
    }

    #[test]
    fn a_feature_nobody_can_check_counts_as_missing() {
        assert!(!has("amx-int8") || cfg!(not(target_arch = "x86_64")));
    }
}
