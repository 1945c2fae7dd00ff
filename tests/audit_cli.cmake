# tests/audit_cli.cmake - `intentgate audit` and the auditors' web pages
# against a real dev-mode PDP (included from tests/CMakeLists.txt):
#   audit.cli  a lifecycle is logged, then verify / export / show / proof
#              round trips, and every kind of tampering (made with plain
#              SQL on copies of the database) fails with its kind
#   ui.audit   /ui/audit for an auditor, 403 for other approvers, escaping,
#              the export download
# Both run tests/integration/test_audit_cli.py (Python standard library).
# The benchmark's log generator (tests/bench/bench_audit_verify.sh) is built
# here too.
if(NOT IG_FUZZ)
  find_program(PYTHON3 python3 REQUIRED)
  add_test(NAME audit.cli
    COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_audit_cli.py
            AuditCli)
  add_test(NAME ui.audit
    COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_audit_cli.py
            AuditUi)
  set_tests_properties(audit.cli ui.audit PROPERTIES
    ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
    TIMEOUT 900)
endif()

if(IG_BENCH AND NOT IG_FUZZ)
  add_executable(bench_audit_gen bench/bench_audit_gen.c)
  target_link_libraries(bench_audit_gen PRIVATE igpdp igaudit)
endif()
