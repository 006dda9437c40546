# Debian packages with CPack's DEB generator (scripts/package.sh DIR runs it).
#
# Why CPack and not a debian/ directory: the install rules are already the one description of
# what goes where (the tests install the tree the same way, tests/install/consumer.sh), and
# CPack turns them into packages without a second list of files to keep in step. Run by
# `cpack -G DEB` in a tree configured with CMAKE_INSTALL_PREFIX=/usr.
#
# One package per install component:
#   libjitmap1           lib        libjitmap.so.1 (the reader, for debuggers and tools)
#   libjitmap-producer0  producer   libjitmap-producer.so.0 (for JITs: no other dependency)
#   libjitmap-dev        dev        headers, the .so links, static archives, CMake package,
#                                   pkg-config files
#   jitmap               tools      jitmap-dump, jitmap-stack, the GDB plugin and scripts, the
#                                   LLDB script, GDB's auto-load script for
#                                   libjitmap-producer, docs, man pages, bash completion
# Library dependencies come from dpkg-shlibdeps; those between the four from the component
# dependencies below.

set(CPACK_PACKAGE_NAME jitmap)
set(CPACK_PACKAGE_VENDOR "The jitmap authors")
set(CPACK_PACKAGE_CONTACT "The jitmap authors <jitmap@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "LLVM stackmaps, deopt state and GC roots of JIT frames in GDB and LLDB")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL lib producer dev tools)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The tools need libjitmap.so.1, which no installed package has yet: dpkg-shlibdeps finds it in
# the build tree (the dependency on libjitmap1 comes from the components below).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR})
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The public libraries' shlibs, so that dpkg-shlibdeps can name their packages for programs
# built against them (CPack adds the ldconfig calls by itself). Written here, not by
# CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS: that option (global, not per component) takes every
# shared object of every package for a public library, and the GDB plugin, a module GDB
# opens by path with no soname, gets a developer warning ("missing soname or soversion") in
# every scripts/package.sh run. The plugin is no library to link against: it has no shlibs.
foreach(comp lib producer)
  if(comp STREQUAL "lib")
    set(_shlib "libjitmap ${JITMAP_SOVERSION} libjitmap${JITMAP_SOVERSION}")
  else()
    set(_shlib "libjitmap-producer ${PROJECT_VERSION_MAJOR} libjitmap-producer${PROJECT_VERSION_MAJOR}")
  endif()
  string(TOUPPER ${comp} _upper)
  file(WRITE ${PROJECT_BINARY_DIR}/cpack/${comp}/shlibs "${_shlib} (= ${PROJECT_VERSION})\n")
  set(CPACK_DEBIAN_${_upper}_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/cpack/${comp}/shlibs)
endforeach()

set(CPACK_DEBIAN_LIB_PACKAGE_NAME libjitmap${JITMAP_SOVERSION})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
# Capstone is loaded with dlopen at the first instruction decoded (arch/insn.c), so
# dpkg-shlibdeps cannot see it: its runtime package, by name.
set(CPACK_DEBIAN_LIB_PACKAGE_DEPENDS "libcapstone4")
set(CPACK_DEBIAN_PRODUCER_PACKAGE_NAME libjitmap-producer${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_PRODUCER_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libjitmap-dev)
# The static archive links these (jitmap.pc's Requires.private).
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libelf-dev, libdwarf-dev, libzstd-dev, liblz4-dev, liblzma-dev")
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME jitmap)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "python3")
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "gdb")
set(CPACK_DEBIAN_TOOLS_PACKAGE_SUGGESTS "lldb, python3-lldb")
# jitmap-dump opens libLLVM with dlopen for Mach-O and COFF files (tools/llvm_object.h).
if(JITMAP_LLVM_OBJECT_MAJOR)
  string(APPEND CPACK_DEBIAN_TOOLS_PACKAGE_SUGGESTS ", libllvm${JITMAP_LLVM_OBJECT_MAJOR}")
endif()

include(CPack)
cpack_add_component(lib DISPLAY_NAME "libjitmap"
  DESCRIPTION "The stackmap reader: parsing, process and core models, frames, unwinding")
cpack_add_component(producer DISPLAY_NAME "libjitmap-producer"
  DESCRIPTION "Registers a JIT's code and stackmaps with GDB and LLDB")
cpack_add_component(dev DISPLAY_NAME "libjitmap-dev" DEPENDS lib producer
  DESCRIPTION "Headers, static archives, CMake and pkg-config files of both libraries")
cpack_add_component(tools DISPLAY_NAME "jitmap" DEPENDS lib
  DESCRIPTION "jitmap-dump, jitmap-stack, the GDB plugin and commands, the LLDB commands")
