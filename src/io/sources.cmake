# Sources of tessera's io layer: mesh readers and writers (host code).
target_sources(tessera PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/gmsh.cpp
  ${CMAKE_CURRENT_LIST_DIR}/high_order.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mfem.cpp
  ${CMAKE_CURRENT_LIST_DIR}/vtu.cpp
  ${CMAKE_CURRENT_LIST_DIR}/vtu_read.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gmsh_write.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mesh_io.cpp
  ${CMAKE_CURRENT_LIST_DIR}/text_reader.cpp)
