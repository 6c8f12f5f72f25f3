//! Records which CPU level llama.cpp was compiled for, so the library can
//! check the running CPU before it loads a model (see `src/cpu.rs`).
//!
//! llama-cpp-sys-2 compiles llama.cpp with the `GGML_*` variables of the
//! environment (`.cargo/config.toml` sets them), and with `-march=native`
//! when `target-cpu=native` or the C flags ask for it. This script reads the
//! same variables; it cannot see the -sys crate's choices any other way.

use std::env;

fn main() {
    for var in [
        "GGML_NATIVE",
        "GGML_SSE42",
        "GGML_AVX",
        "GGML_AVX2",
        "GGML_FMA",
        "GGML_F16C",
        "GGML_BMI2",
        "GGML_AVX_VNNI",
        "GGML_AVX512",
        "GGML_AVX512_VBMI",
        "GGML_AVX512_VNNI",
        "GGML_AVX512_BF16",
        "GGML_AMX_TILE",
        "GGML_AMX_INT8",
        "GGML_AMX_BF16",
        "CFLAGS",
        "CXXFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let target = env::var("TARGET").unwrap_or_default();
    for var in [
        format!("CFLAGS_{}", target.replace('-', "_")),
        format!("CXXFLAGS_{}", target.replace('-', "_")),
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let on = |name: &str| {
        env::var(name).is_ok_and(|v| matches!(v.as_str(), "ON" | "on" | "1" | "TRUE" | "true"))
    };
    let flags: String = ["CFLAGS", "CXXFLAGS"]
        .iter()
        .flat_map(|base| [base.to_string(), format!("{base}_{}", target.replace('-', "_"))])
        .filter_map(|v| env::var(v).ok())
        .collect::<Vec<_>>()
        .join(" ");
    let native = on("GGML_NATIVE")
        || flags.contains("-march=native")
        || flags.contains("-mcpu=native")
        || env::var("CARGO_ENCODED_RUSTFLAGS").is_ok_and(|f| f.contains("target-cpu=native"));

    // The features llama.cpp's code may execute: (ggml option, the name
    // `is_x86_feature_detected!` knows it by).
    // With `cpu-variants`, llama.cpp's CPU code is in one library per CPU
    // generation, chosen at run time (src/variants.rs); what is linked in
    // runs on any CPU of the architecture.
    let variants = env::var_os("CARGO_FEATURE_CPU_VARIANTS").is_some();
    let mut needs: Vec<&str> = Vec::new();
    if arch == "x86_64" && !native && !variants {
        for (option, feature) in [
            ("GGML_SSE42", "sse4.2"),
            ("GGML_AVX", "avx"),
            ("GGML_AVX2", "avx2"),
            ("GGML_FMA", "fma"),
            ("GGML_F16C", "f16c"),
            ("GGML_BMI2", "bmi2"),
            ("GGML_AVX_VNNI", "avxvnni"),
            ("GGML_AVX512", "avx512f"),
            ("GGML_AVX512_VBMI", "avx512vbmi"),
            ("GGML_AVX512_VNNI", "avx512vnni"),
            ("GGML_AVX512_BF16", "avx512bf16"),
            ("GGML_AMX_TILE", "amx-tile"),
            ("GGML_AMX_INT8", "amx-int8"),
            ("GGML_AMX_BF16", "amx-bf16"),
        ] {
            if on(option) {
                needs.push(feature);
            }
        }
    }
    let variant = match (arch.as_str(), native) {
        _ if variants => "variants".to_string(),
        (_, true) => "native".to_string(),
        ("x86_64", false) if needs.contains(&"avx512f") => "x86-64-v4".to_string(),
        ("x86_64", false) if ["avx2", "fma", "f16c", "bmi2"].iter().all(|f| needs.contains(f)) => {
            "x86-64-v3".to_string()
        }
        ("x86_64", false) if needs.contains(&"sse4.2") => "x86-64-v2".to_string(),
        ("x86_64", false) => "x86-64".to_string(),
        ("aarch64", false) => "armv8-a".to_string(),
        (other, false) => other.to_string(),
    };
    println!("cargo:rustc-env=AXON_LOCAL_CPU_VARIANT={variant}");
    println!("cargo:rustc-env=AXON_LOCAL_CPU_NEEDS={}", needs.join(","));
}
