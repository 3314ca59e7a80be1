# tessera_cuda_sources(<file>...)
# Kernels written with tessera's forall/launch are compiled by nvcc in CUDA builds so
# that they can run on the CUDA backend, and by the host compiler otherwise. List the
# .cpp files that launch kernels here; without CUDA this does nothing.
function(tessera_cuda_sources)
  if(TESSERA_CUDA)
    set_source_files_properties(${ARGN} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTIES LANGUAGE CUDA)
  endif()
endfunction()

# tessera_cuda_cxx20()
# CMake 3.25 predates nvcc's C++20 support; this teaches it the flag (newer CMake
# already knows it, and then this does nothing). Call after enable_language(CUDA).
macro(tessera_cuda_cxx20)
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
  endif()
endmacro()
