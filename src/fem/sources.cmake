# Sources of tessera's finite-element layer. Host-only files are compiled by the host
# compiler; files that launch kernels are also listed in tessera_cuda_sources() so that
# nvcc compiles them in CUDA builds.
set(TESSERA_FEM_KERNEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/restriction.cpp
  ${CMAKE_CURRENT_LIST_DIR}/geometric_factors.cpp
  ${CMAKE_CURRENT_LIST_DIR}/interpolate.cpp)
target_sources(tessera PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/quadrature.cpp
  ${CMAKE_CURRENT_LIST_DIR}/basis1d.cpp
  ${CMAKE_CURRENT_LIST_DIR}/basis.cpp
  ${CMAKE_CURRENT_LIST_DIR}/simplex_nodes.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reference_element.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mesh.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mesh_geometry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mesh_generators.cpp
  ${CMAKE_CURRENT_LIST_DIR}/h1_space.cpp
  ${TESSERA_FEM_KERNEL_SOURCES})
tessera_cuda_sources(${TESSERA_FEM_KERNEL_SOURCES})
