# Included by CMake after each project() of llama.cpp's build
# (CMAKE_PROJECT_INCLUDE, set in .cargo/config.toml), to fix three things in
# the shared build with ggml's CPU variants (only with `--features
# cpu-variants`); the first two at the end of the configuration, once the
# targets exist:
# - .cargo/config.toml compiles llama.cpp as a unity build
#   (CMAKE_UNITY_BUILD), which saves about a quarter of its compile time;
#   ggml's AMX kernels (ggml-cpu/amx/mmq.cpp) do not compile in one batch
#   with the rest of ggml-cpu (another file's macros hide members of the
#   quant blocks), so that one target is compiled file by file.
# - Each shared library binds its own symbols (-Bsymbolic). zig (scripts/dist)
#   links a private copy of libc++ into every one of them, but the C++
#   templates a library instantiates from libc++'s headers (a stringstream's
#   constructor, say) are exported, so without it one library's stringstream
#   was built by another's copy and freed by its own: loading a model aborted
#   with "double free or corruption" in libllama's gguf_kv_to_str. A
#   two-library stringstream program built by zig shows the same abort
#   without the flag and runs with it. With the system's shared libstdc++
#   the flag changes nothing.
# - zig's Clang (scripts/dist) spells out every feature of its baseline CPU,
#   including "no 512-bit AVX-512 encodings" (evex512, Clang 18 and later),
#   which -mavx512f then does not undo: every AVX-512 variant gets
#   -mevex512 there. GCC needs and knows no such flag.
if(BUILD_SHARED_LIBS AND NOT CMAKE_SHARED_LINKER_FLAGS MATCHES "Bsymbolic")
  string(APPEND CMAKE_SHARED_LINKER_FLAGS " -Wl,-Bsymbolic")
  string(APPEND CMAKE_MODULE_LINKER_FLAGS " -Wl,-Bsymbolic")
endif()
function(axon_fix_cpu_variants)
  if(TARGET ggml-cpu-sapphirerapids)
    set_target_properties(ggml-cpu-sapphirerapids PROPERTIES UNITY_BUILD OFF)
  endif()
  if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND CMAKE_C_COMPILER_VERSION VERSION_GREATER_EQUAL 18)
    foreach(variant skylakex cannonlake cascadelake icelake cooperlake zen4 sapphirerapids)
      if(TARGET ggml-cpu-${variant})
        target_compile_options(ggml-cpu-${variant} PRIVATE -mevex512)
      endif()
    endforeach()
  endif()
endfunction()
cmake_language(DEFER CALL axon_fix_cpu_variants)
