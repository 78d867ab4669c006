# find_package(scopeprof) -- the header-only profiler, as imported targets:
#   scopeprof::scopeprof  include path and Threads; profiling stays compiled
#                         out unless the target using it defines PROFILE_ENABLE
#   scopeprof::enabled    the same with PROFILE_ENABLE defined: link it to
#                         turn profiling on
# and SCOPEPROF_EXECUTABLE, the reporter. Found relative to this file, so an
# installed tree can be moved.
include(CMakeFindDependencyMacro)
find_dependency(Threads)
get_filename_component(_scopeprof_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET scopeprof::scopeprof)
  add_library(scopeprof::scopeprof INTERFACE IMPORTED)
  set_target_properties(scopeprof::scopeprof PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_scopeprof_prefix}/include"
    INTERFACE_LINK_LIBRARIES Threads::Threads)
  add_library(scopeprof::enabled INTERFACE IMPORTED)
  set_target_properties(scopeprof::enabled PROPERTIES
    INTERFACE_COMPILE_DEFINITIONS PROFILE_ENABLE
    INTERFACE_LINK_LIBRARIES scopeprof::scopeprof)
endif()
set(SCOPEPROF_EXECUTABLE "${_scopeprof_prefix}/bin/scopeprof")
set(SCOPEPROF_INCLUDE_DIRS "${_scopeprof_prefix}/include")
unset(_scopeprof_prefix)
