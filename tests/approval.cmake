# tests/approval.cmake - escalations: sessions and the login limiter
# (cmocka), and the approver API end to end against `intentgate serve
# --dev` (votes, quorum, re-evaluation, deny, self-approval, groups, hash
# binding, expiry, login limits, audit events).
ig_test(approval session LIBS igapproval)
# Failed sign-ins (backoff per key) and device tokens (issue 12).
ig_test(approval limiter LIBS igapproval)

find_program(PYTHON3 python3 REQUIRED)
ig_store_test(approval.integration
  ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_approvals.py)
set_tests_properties(approval.integration PROPERTIES
  ENVIRONMENT "INTENTGATE_BIN=$<TARGET_FILE:intentgate>"
  TIMEOUT 900)
