# Included by CMake after each project() of llama.cpp's build
# (CMAKE_PROJECT_INCLUDE, set in .cargo/config.toml), to fix two things in
# ggml's AMX CPU variant (`sapphirerapids`, built only with
# `--features cpu-variants`), at the end of the configuration, once the
# target exists:
# - .cargo/config.toml compiles llama.cpp as a unity build
#   (CMAKE_UNITY_BUILD), which saves about a quarter of its compile time;
#   ggml's AMX kernels (ggml-cpu/amx/mmq.cpp) do not compile in one batch
#   with the rest of ggml-cpu (another file's macros hide members of the
#   quant blocks), so that one target is compiled file by file.
# - Clang 18 and later (zig's, in scripts/dist) need -mevex512 for 512-bit
#   AVX-512 code in a target that also enables AMX; GCC needs and knows no
#   such flag.
function(axon_fix_amx_variant)
  if(TARGET ggml-cpu-sapphirerapids)
    set_target_properties(ggml-cpu-sapphirerapids PROPERTIES UNITY_BUILD OFF)
    if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND CMAKE_C_COMPILER_VERSION VERSION_GREATER_EQUAL 18)
      target_compile_options(ggml-cpu-sapphirerapids PRIVATE -mevex512)
    endif()
  endif()
endfunction()
cmake_language(DEFER CALL axon_fix_amx_variant)
