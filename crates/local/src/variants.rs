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

/// A variant's name (as in its file name) and the features its code runs.
type Variant = (&'static str, &'static [&'static str]);

/// x86-64's variants, best first, with what each one's compiler flags use
/// (ggml/src/CMakeLists.txt's `ggml_add_cpu_backend_variant` list).
#[cfg(target_arch = "x86_64")]
pub const VARIANTS: &[Variant] = &[
    (
        "sapphirerapids",
        &[
            "avx512f",
            "avx512cd",
            "avx512vl",
            "avx512dq",
            "avx512bw",
            "avx512vbmi",
            "avx512vnni",
            "avx512bf16",
            "avx2",
            "fma",
            "f16c",
            "bmi2",
            "avx",
            "sse4.2",
            "amx",
        ],
    ),
    (
        "zen4",
        &[
            "avx512f",
            "avx512cd",
            "avx512vl",
            "avx512dq",
            "avx512bw",
            "avx512vbmi",
            "avx512vnni",
            "avx512bf16",
            "avx2",
            "fma",
            "f16c",
            "bmi2",
            "avx",
            "sse4.2",
        ],
    ),
    (
        "cooperlake",
        &[
            "avx512f",
            "avx512cd",
            "avx512vl",
            "avx512dq",
            "avx512bw",
            "avx512vnni",
            "avx512bf16",
            "avx2",
            "fma",
            "f16c",
            "bmi2",
            "avx",
            "sse4.2",
        ],
    ),
    (
        "icelake",
        &[
            "avx512f",
            "avx512cd",
            "avx512vl",
            "avx512dq",
            "avx512bw",
            "avx512vbmi",
            "avx512vnni",
            "avx2",
            "fma",
            "f16c",
            "bmi2",
            "avx",
            "sse4.2",
        ],
    ),
    (
        "cascadelake",
        &[
            "avx512f",
            "avx512cd",
            "avx512vl",
            "avx512dq",
            "avx512bw",
            "avx512vnni",
            "avx2",
            "fma",
            "f16c",
            "bmi2",
            "avx",
            "sse4.2",
        ],
    ),
    (
        "cannonlake",
        &[
            "avx512f",
            "avx512cd",
            "avx512vl",
            "avx512dq",
            "avx512bw",
            "avx512vbmi",
            "avx2",
            "fma",
            "f16c",
            "bmi2",
            "avx",
            "sse4.2",
        ],
    ),
    (
        "skylakex",
        &[
            "avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw", "avx2", "fma", "f16c",
            "bmi2", "avx", "sse4.2",
        ],
    ),
    ("alderlake", &["avxvnni", "avx2", "fma", "f16c", "bmi2", "avx", "sse4.2"]),
    ("haswell", &["avx2", "fma", "f16c", "bmi2", "avx", "sse4.2"]),
    ("piledriver", &["fma", "f16c", "avx", "sse4.2"]),
    ("ivybridge", &["f16c", "avx", "sse4.2"]),
    ("sandybridge", &["avx", "sse4.2"]),
    ("sse42", &["sse4.2"]),
    ("x64", &[]),
];

/// aarch64's variants, best first (Linux; Apple and Android have others).
#[cfg(target_arch = "aarch64")]
pub const VARIANTS: &[Variant] = &[
    ("armv9.2_2", &["dotprod", "fp16", "sve", "i8mm", "sve2", "sme"]),
    ("armv9.2_1", &["dotprod", "fp16", "sve", "i8mm", "sme"]),
    ("armv8.6_2", &["dotprod", "fp16", "sve", "i8mm", "sve2"]),
    ("armv8.6_1", &["dotprod", "fp16", "sve", "i8mm"]),
    ("armv8.2_3", &["dotprod", "fp16", "sve"]),
    ("armv8.2_2", &["dotprod", "fp16"]),
    ("armv8.2_1", &["dotprod"]),
    ("armv8.0_1", &[]),
];

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub const VARIANTS: &[Variant] = &[];

/// The variants whose features `has` grants and whose library `present`
/// finds, best first.
pub fn fitting(has: impl Fn(&str) -> bool, present: impl Fn(&str) -> bool) -> Vec<&'static str> {
    VARIANTS
        .iter()
        .filter(|(name, needs)| needs.iter().all(|f| has(f)) && present(name))
        .map(|(name, _)| *name)
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
        .find(|dir| VARIANTS.iter().any(|(name, _)| dir.join(file_name(name)).is_file()))
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
