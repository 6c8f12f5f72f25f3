# Included by CMake after each project() of llama.cpp's build
# (CMAKE_PROJECT_INCLUDE, set in .cargo/config.toml).
#
# .cargo/config.toml compiles llama.cpp as a unity build (CMAKE_UNITY_BUILD),
# which saves about a quarter of its compile time. ggml's AMX kernels
# (ggml-cpu/amx/mmq.cpp, only in the `sapphirerapids` CPU variant that
# `--features cpu-variants` builds) do not compile in one batch with the
# rest of ggml-cpu: another file's macros hide members of the quant blocks.
# That one target is compiled file by file; every other target keeps unity.
function(axon_amx_variant_without_unity)
  if(TARGET ggml-cpu-sapphirerapids)
    set_target_properties(ggml-cpu-sapphirerapids PROPERTIES UNITY_BUILD OFF)
  endif()
endfunction()
cmake_language(DEFER CALL axon_amx_variant_without_unity)
