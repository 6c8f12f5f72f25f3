# Included by CMake after each project() of llama.cpp's build
# (CMAKE_PROJECT_INCLUDE, set in .cargo/config.toml), to fix two things in
# ggml's CPU variants (built only with `--features cpu-variants`), at the
# end of the configuration, once the targets exist:
# - .cargo/config.toml compiles llama.cpp as a unity build
#   (CMAKE_UNITY_BUILD), which saves about a quarter of its compile time;
#   ggml's AMX kernels (ggml-cpu/amx/mmq.cpp) do not compile in one batch
#   with the rest of ggml-cpu (another file's macros hide members of the
#   quant blocks), so that one target is compiled file by file.
# - zig's Clang (scripts/dist) spells out every feature of its baseline CPU,
#   including "no 512-bit AVX-512 encodings" (evex512, Clang 18 and later),
#   which -mavx512f then does not undo: every AVX-512 variant gets
#   -mevex512 there. GCC needs and knows no such flag.
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
