//! llama.cpp's CPU code chosen for the running CPU, at run time
//! (`--features cpu-variants`, `scripts/dist --cpu-variants`).
//!
//! llama.cpp is built once per CPU generation (`GGML_CPU_ALL_VARIANTS`):
//! one `libggml-cpu-<variant>.so` each, from plain x86-64 to Sapphire
//! Rapids with AMX, and from armv8.0 to armv9.2 with SME. axon loads exactly
//! one of them, the best this CPU runs, before the first model.
//!
//! Guarantees:
//! - The choice is axon's own, from [`VARIANTS`] in order of preference and
//!   the standard library's feature detection (which also checks that the OS
//!   saves the registers involved); llama.cpp's own check of the library
//!   (`ggml_backend_score`) must agree too, or the next one is tried. A CPU
//!   that fits none gets [`crate::LocalError::Variants`], never SIGILL.
//! - AMX counts only when the kernel grants this process its tile state
//!   (`arch_prctl(ARCH_REQ_XCOMP_PERM)`): a VM or kernel that advertises AMX
//!   in CPUID and withholds the state gets the AVX-512 variant instead of
//!   the fault seen in issue 29.
//! - The libraries are looked for only where axon's own packages put them,
//!   beside the executable (`lib/axon/` next to it or one folder up) and
//!   in the build's own output folder; never in the working directory or a
//!   path from the environment, which a repository could plant.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A variant: its name (as in its file name), the variant whose features
/// it builds on, and the features it adds, as ggml/src/CMakeLists.txt's
/// `ggml_add_cpu_backend_variant` list has them.
pub type Variant = (&'static str, Option<&'static str>, &'static [&'static str]);

/// x86-64's variants, best first.
#[cfg(target_arch = "x86_64")]
#[rustfmt::skip]
pub const VARIANTS: &[Variant] = &[
    ("sapphirerapids", Some("zen4"), &["amx"]),
    ("zen4", Some("icelake"), &["avx512bf16"]),
    ("cooperlake", Some("cascadelake"), &["avx512bf16"]),
    ("icelake", Some("cascadelake"), &["avx512vbmi"]),
    ("cascadelake", Some("skylakex"), &["avx512vnni"]),
    ("cannonlake", Some("skylakex"), &["avx512vbmi"]),
    // GGML_AVX512 is -mavx512f -mavx512cd -mavx512vl -mavx512dq -mavx512bw.
    ("skylakex", Some("haswell"), &["avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"]),
    ("alderlake", Some("haswell"), &["avxvnni"]),
    ("haswell", Some("piledriver"), &["avx2", "bmi2"]),
    ("piledriver", Some("ivybridge"), &["fma"]),
    ("ivybridge", Some("sandybridge"), &["f16c"]),
    ("sandybridge", Some("sse42"), &["avx"]),
    ("sse42", Some("x64"), &["sse4.2"]),
    ("x64", None, &[]),
];

/// aarch64's variants, best first (Linux; Apple and Android have others).
#[cfg(target_arch = "aarch64")]
#[rustfmt::skip]
pub const VARIANTS: &[Variant] = &[
    ("armv9.2_2", Some("armv8.6_2"), &["sme"]),
    ("armv9.2_1", Some("armv8.6_1"), &["sme"]),
    ("armv8.6_2", Some("armv8.6_1"), &["sve2"]),
    ("armv8.6_1", Some("armv8.2_3"), &["i8mm"]),
    ("armv8.2_3", Some("armv8.2_2"), &["sve"]),
    ("armv8.2_2", Some("armv8.2_1"), &["fp16"]),
    ("armv8.2_1", Some("armv8.0_1"), &["dotprod"]),
    ("armv8.0_1", None, &[]),
];

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub const VARIANTS: &[Variant] = &[];

/// Every feature a variant's code runs: its base's first, then its own (so
/// AMX is asked about only after AVX-512 was found).
pub fn needs(name: &str) -> Vec<&'static str> {
    let Some((_, base, own)) = VARIANTS.iter().find(|(n, _, _)| *n == name) else {
        return Vec::new();
    };
    let mut all = base.map(needs).unwrap_or_default();
    all.extend_from_slice(own);
    all
}

/// The variants whose features `has` grants and whose library `present`
/// finds, best first.
pub fn fitting(has: impl Fn(&str) -> bool, present: impl Fn(&str) -> bool) -> Vec<&'static str> {
    VARIANTS
        .iter()
        .map(|(name, _, _)| *name)
        .filter(|name| needs(name).iter().all(|f| has(f)) && present(name))
        .collect()
}

/// The best of [`fitting`].
pub fn choose(has: impl Fn(&str) -> bool, present: impl Fn(&str) -> bool) -> Option<&'static str> {
    fitting(has, present).first().copied()
}

/// The file of a variant's library.
pub fn file_name(variant: &str) -> String {
    format!("libggml-cpu-{variant}.so")
}

/// Where axon looks for the variants, in order: `lib/axon/` beside the
/// executable (the archives and the VS Code extension), one folder up
/// (`bin/axon` with `lib/axon/`: the wheel, npm, /usr/local), and the
/// folder this build put them in (a `cargo build` run in place).
pub fn search_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(exe_dir) =
        std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf))
    {
        dirs.push(exe_dir.join("lib").join("axon"));
        if let Some(up) = exe_dir.parent() {
            dirs.push(up.join("lib").join("axon"));
        }
    }
    if let Some(built) = llama_cpp_sys_2::BACKENDS_DIR {
        dirs.push(PathBuf::from(built));
    }
    dirs
}

/// The first searched folder holding any variant.
pub fn found_dir() -> Option<PathBuf> {
    search_dirs()
        .into_iter()
        .find(|dir| VARIANTS.iter().any(|(name, _, _)| dir.join(file_name(name)).is_file()))
}

/// The variant this CPU would get, without loading it.
pub fn would_choose() -> Option<&'static str> {
    let dir = found_dir()?;
    choose(crate::cpu::has, |name| dir.join(file_name(name)).is_file())
}

/// Loads the chosen variant into llama.cpp once per process; the name of
/// what was loaded, or why nothing could be.
pub fn load() -> Result<&'static str, crate::LocalError> {
    static LOADED: OnceLock<Result<&'static str, crate::LocalError>> = OnceLock::new();
    LOADED.get_or_init(load_once).clone()
}

fn load_once() -> Result<&'static str, crate::LocalError> {
    let searched = search_dirs();
    let Some(dir) = found_dir() else {
        return Err(crate::LocalError::Variants {
            detail: format!(
                "no CPU variant libraries (libggml-cpu-*.so) were found in {}",
                list(&searched)
            ),
        });
    };
    let mut refused = Vec::new();
    for name in fitting(crate::cpu::has, |name| dir.join(file_name(name)).is_file()) {
        let path = dir.join(file_name(name));
        let Some(c_path) = path.to_str().and_then(|p| CString::new(p).ok()) else {
            refused.push(format!("{name} (its path is not UTF-8)"));
            continue;
        };
        // SAFETY: a NUL-terminated path; ggml_backend_load returns null
        // (after its own score check) instead of registering a library
        // that cannot run here.
        #[allow(unsafe_code)]
        let registered = unsafe { llama_cpp_sys_2::ggml_backend_load(c_path.as_ptr()) };
        if !registered.is_null() {
            return Ok(name);
        }
        refused.push(format!("{name} (llama.cpp refused it)"));
    }
    Err(crate::LocalError::Variants {
        detail: format!(
            "none of the CPU variants in {} runs on this CPU{}",
            dir.display(),
            if refused.is_empty() {
                String::new()
            } else {
                format!("; tried {}", refused.join(", "))
            }
        ),
    })
}

fn list(dirs: &[PathBuf]) -> String {
    dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
}
