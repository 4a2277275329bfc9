# SPDX-License-Identifier: GPL-2.0-or-later
# Installation rules and the Debian package (cpack -G DEB from the build dir).
#
# The daemon reads /etc/turbosched whatever the install prefix, like any
# system daemon; TS_CONFDIR moves it for a staged or private install. Absolute
# destinations still honour DESTDIR, which is how CPack stages the package.

set(TS_CONFDIR "/etc/turbosched" CACHE PATH "Configuration directory (turbosched.conf, rules.d/)")

pkg_get_variable(TS_SYSTEMD_UNITDIR_PC systemd systemdsystemunitdir)
if(TS_SYSTEMD_UNITDIR_PC)
  set(_ts_unitdir_default "${TS_SYSTEMD_UNITDIR_PC}")
else()
  set(_ts_unitdir_default "/lib/systemd/system")
endif()
set(TS_SYSTEMD_UNITDIR "${_ts_unitdir_default}" CACHE PATH "systemd system unit directory")

set(TS_SBINDIR "${CMAKE_INSTALL_FULL_SBINDIR}")
configure_file(${CMAKE_SOURCE_DIR}/systemd/turboschedd.service.in
               ${CMAKE_BINARY_DIR}/turboschedd.service @ONLY)

install(TARGETS turboschedd RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})
if(TARGET turbosched-ctl)
  install(TARGETS turbosched-ctl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(FILES ${CMAKE_BINARY_DIR}/turboschedd.service
              ${CMAKE_SOURCE_DIR}/systemd/turbosched-jitter.slice
        DESTINATION ${TS_SYSTEMD_UNITDIR})

install(DIRECTORY DESTINATION ${TS_CONFDIR}/rules.d)

# An administrator's edited turbosched.conf survives `cmake --install`; the
# package path goes through dpkg's conffile handling instead (the staging
# directory is empty, so the file always lands there).
set(_ts_conf ${CMAKE_SOURCE_DIR}/conf/turbosched.conf)
if(EXISTS ${_ts_conf})
  install(CODE "
    set(_dst \"\$ENV{DESTDIR}${TS_CONFDIR}/turbosched.conf\")
    if(EXISTS \"\${_dst}\")
      message(STATUS \"Keeping existing: \${_dst}\")
    else()
      file(INSTALL DESTINATION \"${TS_CONFDIR}\" TYPE FILE PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ FILES \"${_ts_conf}\")
    endif()")
endif()

file(GLOB _ts_man5 CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/man/*.5)
file(GLOB _ts_man8 CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/man/*.8)
if(_ts_man5)
  install(FILES ${_ts_man5} DESTINATION ${CMAKE_INSTALL_MANDIR}/man5)
endif()
if(_ts_man8)
  install(FILES ${_ts_man8} DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
endif()

# --- Debian package --------------------------------------------------------
set(CPACK_GENERATOR "DEB" CACHE STRING "CPack generators")
set(CPACK_PACKAGE_NAME "turbosched")
set(CPACK_PACKAGE_VENDOR "turbosched")
set(CPACK_PACKAGE_CONTACT "turbosched maintainers <turbosched@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "keep busy cores in turbo by packing jitter tasks onto them")
set(CPACK_PACKAGE_DESCRIPTION
  "turboschedd watches task creation, recognises short low-utilisation jitter\n\
tasks, and confines them to cores that are already busy and still have spare\n\
SMT capacity, so idle cores stay idle and busy cores keep their turbo\n\
frequency. A userspace take on IBM's TurboSched scheduler patch.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)     # turbosched_<version>_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION "admin")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/turbosched/turbosched")
find_program(TS_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(TS_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  # Debian 12 names; the versions are those the build was tested with.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libc6 (>= 2.36), libsystemd0 (>= 252), libcgroup2 (>= 2.0.2), libnl-3-200, libinih1 (>= 55), libjson-c5 (>= 0.16), libcpupower1")
endif()
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
foreach(_s postinst prerm postrm)
  configure_file(${CMAKE_SOURCE_DIR}/packaging/${_s}.in ${CMAKE_BINARY_DIR}/packaging/${_s} @ONLY)
endforeach()
configure_file(${CMAKE_SOURCE_DIR}/packaging/conffiles.in ${CMAKE_BINARY_DIR}/packaging/conffiles @ONLY)
set(_ts_control_extra
  ${CMAKE_BINARY_DIR}/packaging/postinst
  ${CMAKE_BINARY_DIR}/packaging/prerm
  ${CMAKE_BINARY_DIR}/packaging/postrm)
if(EXISTS ${_ts_conf})
  list(APPEND _ts_control_extra ${CMAKE_BINARY_DIR}/packaging/conffiles)
endif()
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${_ts_control_extra}")
include(CPack)
