# Installing attnlab (`cmake --install`), its .deb (`cpack`), and what the binary needs to know
# about both: the generated build-info header (version, LibTorch, CUDA, where installed data
# lives), read by `attnlab --version` and the relocatable data lookup (app/common/data_paths.cpp).
include(GNUInstallDirs)

if(TORCH_CUDA_LIBRARIES OR TARGET torch_cuda)
  set(ATTN_TORCH_HAS_CUDA 1)
else()
  set(ATTN_TORCH_HAS_CUDA 0)
endif()
if(ATTN_WITH_CUDA)
  set(ATTN_BUILD_CUDA_KERNELS 1)
else()
  set(ATTN_BUILD_CUDA_KERNELS 0)
endif()
set(ATTN_INSTALL_DATA_DIR "${CMAKE_INSTALL_FULL_DATADIR}/attnlab")
# Relative, so that a moved prefix (or a .deb's /usr against a /usr/local configure) still finds
# its data beside the binary.
file(RELATIVE_PATH ATTN_DATA_FROM_BINDIR "${CMAKE_INSTALL_FULL_BINDIR}" "${ATTN_INSTALL_DATA_DIR}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/attnlab_build_info.h.in
               ${PROJECT_BINARY_DIR}/generated/attnlab_build_info.h @ONLY)
foreach(target attnlab_cli attnlab)
  target_include_directories(${target} PRIVATE ${PROJECT_BINARY_DIR}/generated)
endforeach()

# The binary and the shipped configs (reproduction configs included, under configs/repro).
# Shaders are embedded into the binary at build time; fonts come from the system (DejaVu).
install(TARGETS attnlab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/assets/configs
        DESTINATION ${CMAKE_INSTALL_DATADIR}/attnlab)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# cpack -G DEB (in the build directory): attnlab_<version>_<arch>.deb installing under /usr.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME attnlab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Train small attention models and watch what they learn (LibTorch + Dear ImGui)")
set(CPACK_PACKAGE_CONTACT "attnlab maintainers <attnlab@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Debian 12's runtime packages of the libraries the binary links (readelf -d NEEDED, dpkg -S),
# and the default figure font. Listed rather than computed by dpkg-shlibdeps so that packaging
# needs no dpkg-dev and gives the same list on every machine.
set(ATTN_DEB_DEPENDS libtorch1.13 libmuparser2v5 libcairo2 libfreetype6 libpng16-16 zlib1g
    libstdc++6 libgcc-s1 libc6 fonts-dejavu-core)
if(ATTN_BUILD_GUI)
  list(APPEND ATTN_DEB_DEPENDS libglfw3 libepoxy0 libstb0 libgl1)
endif()
string(REPLACE ";" ", " CPACK_DEBIAN_PACKAGE_DEPENDS "${ATTN_DEB_DEPENDS}")
# The default text corpus and the image dataset: wanted, not needed to start.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "fortunes-min, fortunes, dataset-fashion-mnist")
include(CPack)
