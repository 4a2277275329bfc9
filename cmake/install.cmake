# SPDX-License-Identifier: GPL-2.0-or-later
# Installation rules: `cmake --install` and the Debian package (debian/rules
# stages them with DESTDIR through dh_auto_install).
#
# The daemon reads /etc/turbosched whatever the install prefix, like any
# system daemon; TS_CONFDIR moves it for a staged or private install. Absolute
# destinations still honour DESTDIR, which is how debhelper stages the package.

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

# An administrator's edited turbosched.conf (and example drop-in) survives
# `cmake --install`; the package path goes through dpkg's conffile handling
# instead (the staging directory is empty, so the files always land there).
foreach(_ts_conf turbosched.conf rules.d/50-example.conf)
  get_filename_component(_ts_conf_dir "${TS_CONFDIR}/${_ts_conf}" DIRECTORY)
  install(CODE "
    set(_dst \"\$ENV{DESTDIR}${TS_CONFDIR}/${_ts_conf}\")
    if(EXISTS \"\${_dst}\")
      message(STATUS \"Keeping existing: \${_dst}\")
    else()
      file(INSTALL DESTINATION \"${_ts_conf_dir}\" TYPE FILE PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ FILES \"${CMAKE_SOURCE_DIR}/conf/${_ts_conf}\")
    endif()")
endforeach()

file(GLOB _ts_man5 CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/man/*.5)
file(GLOB _ts_man8 CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/man/*.8)
if(_ts_man5)
  install(FILES ${_ts_man5} DESTINATION ${CMAKE_INSTALL_MANDIR}/man5)
endif()
if(_ts_man8)
  install(FILES ${_ts_man8} DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
endif()
