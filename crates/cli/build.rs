//! With `cpu-variants`, axon links llama.cpp's shared libraries; the
//! packages put them in `lib/axon/` beside the binary (the archives, the
//! VS Code extension) or one folder up (`bin/axon`: the wheel, npm). The
//! binary's run path names exactly those two places, relative to itself
//! (`$ORIGIN`), so it never reads a library from the working directory or
//! an absolute path of the build machine.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let variants = std::env::var_os("CARGO_FEATURE_CPU_VARIANTS").is_some();
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if variants && linux {
        println!("cargo:rustc-link-arg-bins=-Wl,-rpath,$ORIGIN/lib/axon:$ORIGIN/../lib/axon");
    }
}
