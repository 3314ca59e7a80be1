# Sources of tessera's tensor layer (header-only apart from the CUDA graph helpers,
# which nvcc compiles in CUDA builds).
set(TESSERA_TENSOR_KERNEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/graph.cpp)
target_sources(tessera PRIVATE ${TESSERA_TENSOR_KERNEL_SOURCES})
tessera_cuda_sources(${TESSERA_TENSOR_KERNEL_SOURCES})
