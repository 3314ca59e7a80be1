# Sources of tessera's linear-algebra layer (sparse matrices, their products, solvers).
# Knows nothing of finite elements. Files that launch kernels are also listed in
# tessera_cuda_sources() so that nvcc compiles them in CUDA builds.
set(TESSERA_LINALG_KERNEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/csr.cpp
  ${CMAKE_CURRENT_LIST_DIR}/krylov.cpp)
set(TESSERA_LINALG_HOST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/matrix_market.cpp)
if(TESSERA_LINALG_KERNEL_SOURCES OR TESSERA_LINALG_HOST_SOURCES)
  target_sources(tessera PRIVATE ${TESSERA_LINALG_KERNEL_SOURCES} ${TESSERA_LINALG_HOST_SOURCES})
  tessera_cuda_sources(${TESSERA_LINALG_KERNEL_SOURCES})
endif()
