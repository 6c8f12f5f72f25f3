//! The CPU level llama.cpp was compiled for, and whether this CPU has it.
//!
//! Two kinds of build: the default one compiles llama.cpp once, for one
//! portable level (below); `--features cpu-variants` compiles it once per
//! CPU generation and chooses at run time ([`crate::variants`]). [`summary`]
//! and [`supported`] answer for whichever this build is.
//!
//! Guarantees of the default build:
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

/// Whether the local model can run on this CPU in this build.
pub fn supported() -> bool {
    if cfg!(feature = "cpu-variants") {
        return variants_summary().0;
    }
    missing().is_empty()
}

/// One line for `axon --version` and `axon doctor`: the level (or the
/// variant chosen for this CPU), and whether this CPU runs it.
pub fn summary() -> String {
    if cfg!(feature = "cpu-variants") {
        return variants_summary().1;
    }
    level_summary()
}

#[cfg(feature = "cpu-variants")]
fn variants_summary() -> (bool, String) {
    use crate::variants;
    let built = variants::VARIANTS.len();
    match (variants::found_dir(), variants::would_choose()) {
        (Some(dir), Some(chosen)) => (
            true,
            format!("{chosen} (chosen for this CPU from {built} variants in {})", dir.display()),
        ),
        (Some(dir), None) => {
            (false, format!("no CPU variant in {} runs on this CPU", dir.display()))
        }
        (None, _) => (
            false,
            format!(
                "CPU variants missing: no libggml-cpu-*.so in {}; install axon again from its package",
                variants::search_dirs()
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    }
}

#[cfg(not(feature = "cpu-variants"))]
fn variants_summary() -> (bool, String) {
    (missing().is_empty(), level_summary())
}

fn level_summary() -> String {
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

/// Whether this CPU, with this OS, runs `feature`.
#[cfg(target_arch = "x86_64")]
pub fn has(feature: &str) -> bool {
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
        "avx512cd" => x86!("avx512cd"),
        "avx512vl" => x86!("avx512vl"),
        "avx512dq" => x86!("avx512dq"),
        "avx512bw" => x86!("avx512bw"),
        "avx512vbmi" => x86!("avx512vbmi"),
        "avx512vnni" => x86!("avx512vnni"),
        "avx512bf16" => x86!("avx512bf16"),
        "amx" => amx_granted(),
        _ => false,
    }
}

/// AMX-TILE and AMX-INT8 in CPUID, and the kernel's grant of the tile data
/// state to this process (Linux 5.16+). The grant is what llama.cpp's AMX
/// code needs before its first tile instruction; asking for it here is the
/// same request it makes, so nothing is granted that it would not ask for.
#[cfg(target_arch = "x86_64")]
fn amx_granted() -> bool {
    // Every variant with AMX lists AVX-512 before it, so CPUID's leaf 7
    // exists whenever this is asked.
    let leaf7 = std::arch::x86_64::__cpuid_count(7, 0);
    let (tile, int8) = (leaf7.edx & (1 << 24) != 0, leaf7.edx & (1 << 25) != 0);
    if !(tile && int8) {
        return false;
    }
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: arch_prctl with an integer request and argument; it changes
    // only which extended states this process may use.
    #[allow(unsafe_code)]
    let granted =
        unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) };
    granted == 0
}

/// Whether this CPU, with this OS, runs `feature`.
#[cfg(target_arch = "aarch64")]
pub fn has(feature: &str) -> bool {
    use std::arch::is_aarch64_feature_detected as arm;
    match feature {
        "dotprod" => arm!("dotprod"),
        "fp16" => arm!("fp16"),
        "sve" => arm!("sve"),
        "i8mm" => arm!("i8mm"),
        "sve2" => arm!("sve2"),
        // The standard library's SME detection is unstable; the kernel's
        // hardware capability bits say the same.
        "sme" => hwcap2() & libc::HWCAP2_SME != 0,
        _ => false,
    }
}

/// The kernel's second word of hardware capabilities.
#[cfg(target_arch = "aarch64")]
fn hwcap2() -> libc::c_ulong {
    // SAFETY: getauxval reads the process's auxiliary vector.
    #[allow(unsafe_code)]
    unsafe {
        libc::getauxval(libc::AT_HWCAP2)
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn has(_feature: &str) -> bool {
    false
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
